package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"

	"github.com/flowgate/flowgate/host/runcenter"
)

// HTTPConfig is the gateway's TCP listener (`flowgate gateway --http`, or
// `http:` in the config file), which serves the run center (the web page,
// see package runcenter), /metrics, /healthz and /readyz. The zero value
// is off.
//
//	http:
//	  addr: 127.0.0.1:7070   # host:port; empty turns the listener off
//	  auth_token: s3cret     # a token named admin (--auth-token)
//	  tokens:                # named tokens: the name is who answers a gate
//	    - name: alice
//	      token: 7f3a…
//	  tls_cert: /etc/flowgate/cert.pem   # serve HTTPS with this pair
//	  tls_key: /etc/flowgate/key.pem
//
// With a token set, every request needs one of them, as Authorization:
// Bearer TOKEN or as the run center's login cookie. A loopback address
// (127.0.0.1, ::1, localhost) needs neither a token nor TLS. Any other
// address needs a token, with or without TLS: TLS hides the traffic but
// says nothing of who sends it, so without a token anyone on the network
// could answer gates and cancel flows. Validate refuses such an address,
// so the gateway is never open to a network by accident.
type HTTPConfig struct {
	// Addr is the host:port to listen on; empty means no listener. Port 0
	// picks a free port (Gateway.HTTPAddr reports it).
	Addr string `yaml:"addr"`
	// AuthToken, when set, is a token named AuthTokenName; a request
	// without a token gets 401.
	AuthToken string `yaml:"auth_token"`
	// Tokens are named tokens; a request without one of them (or
	// AuthToken) gets 401. A gate answered or a flow cancelled in the
	// run center is recorded as by the token's name.
	Tokens []runcenter.Token `yaml:"tokens"`
	// TLSCert and TLSKey are PEM files; set both to serve HTTPS.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// PublicURL is the run center's address as people reach it (behind
	// a proxy, or this listener's own); when set, messages link to a
	// flow's page under it. It needs no listener here: a gateway hosted
	// by a command links to the daemon's run center.
	PublicURL string `yaml:"public_url"`
}

// AuthTokenName is the name of http.auth_token (--auth-token): who a gate
// answered with it is recorded as.
const AuthTokenName = "admin"

// AllTokens is Tokens with AuthToken, named AuthTokenName, if set.
func (c HTTPConfig) AllTokens() []runcenter.Token {
	all := slices.Clone(c.Tokens)
	if c.AuthToken != "" {
		all = append(all, runcenter.Token{Name: AuthTokenName, Token: c.AuthToken})
	}
	return all
}

// TLS reports whether the listener serves HTTPS.
func (c HTTPConfig) TLS() bool { return c.TLSCert != "" }

// Validate names the first impossible field: a public_url that is not an
// http(s) address, a token or TLS without an
// address, half a TLS pair, a token without a name or repeated (see
// runcenter.ValidateTokens), an address that does not parse, or a
// non-loopback address without a token (TLS or not).
func (c HTTPConfig) Validate() error {
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return fmt.Errorf("http.public_url %q is not an http or https address without credentials; write it like https://flowgate.example.com", c.PublicURL)
		}
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("http: set both tls_cert and tls_key (--tls-cert and --tls-key), or neither")
	}
	all := c.AllTokens()
	if err := runcenter.ValidateTokens(all); err != nil {
		return err
	}
	tokens := len(all) > 0
	if c.Addr == "" {
		if tokens || c.TLS() {
			return errors.New("http: an auth token or TLS is set but no address to listen on; set http.addr (--http), such as 127.0.0.1:7070")
		}
		return nil
	}
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("http.addr %q is not host:port (write it like 127.0.0.1:7070): %w", c.Addr, err)
	}
	if !loopback(host) && !tokens {
		return fmt.Errorf("http.addr %q is not a loopback address: refusing to serve it without a token, "+
			"since TLS encrypts but does not say who may approve, deny or cancel; "+
			"set an auth token (--auth-token, http.auth_token or http.tokens), or listen on 127.0.0.1", c.Addr)
	}
	return nil
}

// loopback reports whether host names only this machine. An empty host
// (every interface) and any host name but localhost are not loopback.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
