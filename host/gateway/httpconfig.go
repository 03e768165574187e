package gateway

import (
	"errors"
	"fmt"
	"net"
)

// HTTPConfig is the gateway's TCP listener (`flowgate gateway --http`, or
// `http:` in the config file), which serves /metrics, /healthz and
// /readyz. The zero value is off.
//
//	http:
//	  addr: 127.0.0.1:7070   # host:port; empty turns the listener off
//	  auth_token: s3cret     # every request needs Authorization: Bearer s3cret
//	  tls_cert: /etc/flowgate/cert.pem   # serve HTTPS with this pair
//	  tls_key: /etc/flowgate/key.pem
//
// A loopback address (127.0.0.1, ::1, localhost) needs neither a token
// nor TLS. Any other address needs one of them: Validate refuses it
// otherwise, so the metrics and probes of a gateway are never open to a
// network by accident.
type HTTPConfig struct {
	// Addr is the host:port to listen on; empty means no listener. Port 0
	// picks a free port (Gateway.HTTPAddr reports it).
	Addr string `yaml:"addr"`
	// AuthToken, when set, is the bearer token every request must carry;
	// a request without it gets 401.
	AuthToken string `yaml:"auth_token"`
	// TLSCert and TLSKey are PEM files; set both to serve HTTPS.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
}

// TLS reports whether the listener serves HTTPS.
func (c HTTPConfig) TLS() bool { return c.TLSCert != "" }

// Validate names the first impossible field: a token or TLS without an
// address, half a TLS pair, an address that does not parse, or a
// non-loopback address with neither a token nor TLS.
func (c HTTPConfig) Validate() error {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("http: set both tls_cert and tls_key (--tls-cert and --tls-key), or neither")
	}
	if c.Addr == "" {
		if c.AuthToken != "" || c.TLS() {
			return errors.New("http: an auth token or TLS is set but no address to listen on; set http.addr (--http), such as 127.0.0.1:7070")
		}
		return nil
	}
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("http.addr %q is not host:port (write it like 127.0.0.1:7070): %w", c.Addr, err)
	}
	if !loopback(host) && c.AuthToken == "" && !c.TLS() {
		return fmt.Errorf("http.addr %q is not a loopback address: refusing to serve it without protection; "+
			"set an auth token (--auth-token or http.auth_token) or TLS (--tls-cert and --tls-key), or listen on 127.0.0.1", c.Addr)
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
