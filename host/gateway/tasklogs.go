package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// logFetchTimeout bounds the look-up of the gateway that ran a task and
// the request for its log, for a page that shows it.
const logFetchTimeout = 5 * time.Second

// LogElsewhere is the error for a task's log that cannot be read from
// here: a task's log is files in the home of the gateway that ran it
// (gateway, a member id host.pid), and why says what keeps this one from
// them and where to read them instead.
func LogElsewhere(gateway, why string) error {
	return fmt.Errorf("the log of this task is on %s, which is not reachable from here: %s", logWhere(gateway), why)
}

// logWhere names the host and the gateway of member id gateway.
func logWhere(gateway string) string {
	return fmt.Sprintf("host %s (gateway %s)", memberHost(gateway), gateway)
}

// logAt is the run center's Config.LogAt: nil on bbolt, where every log
// is in the home. A task's log is in this home when one of its gateways
// ran it (mine); in the home of the gateway that ran it when that
// gateway is a member on this machine; at that gateway's run center when
// it serves one this machine can reach, asked with this gateway's own
// token (the gateways of an installation share their http section);
// otherwise the error (LogElsewhere) says where it is.
func (g *Gateway) logAt() func(ctx context.Context, gateway string) (runcenter.LogPlace, error) {
	r := g.st
	if r.member == nil {
		return nil
	}
	mine, es, host, dir := r.mine(g.cfg.Home), r.Store.(*etcd.Store), r.member.Host(), g.cfg.Home
	client := &http.Client{Timeout: logFetchTimeout, Transport: &http.Transport{TLSClientConfig: g.peerTLS()}}
	var token string
	if all := g.cfg.File.HTTP.AllTokens(); len(all) > 0 {
		token = all[len(all)-1].Token // auth_token (admin) when set, else a named one
	}
	return func(ctx context.Context, gateway string) (runcenter.LogPlace, error) {
		if mine(gateway) {
			return runcenter.LogPlace{Home: dir}, nil
		}
		ctx, cancel := context.WithTimeout(ctx, logFetchTimeout)
		defer cancel()
		rec, err := es.Member(ctx, gateway)
		switch {
		case err != nil:
			return runcenter.LogPlace{}, LogElsewhere(gateway, fmt.Sprintf("looking that gateway up failed (%v); reload the page once etcd answers", err))
		case rec == nil:
			return runcenter.LogPlace{}, LogElsewhere(gateway, "that gateway left the installation; run flowgate tasks logs on that host, with the home that gateway ran from")
		case rec.Host == host && rec.Home != "":
			return runcenter.LogPlace{Home: rec.Home}, nil
		}
		base, why := runCenterURL(rec)
		if base == "" {
			return runcenter.LogPlace{}, LogElsewhere(gateway, why+"; run flowgate tasks logs on that host")
		}
		return runcenter.LogPlace{URL: base, Token: token, Client: client, Where: logWhere(gateway)}, nil
	}
}

// runCenterURL is the base URL of member rec's run center as another
// machine reaches it: its address, with its host name for an address
// that listens on every interface. It is "" when the member serves none
// another machine can reach, and why says so.
func runCenterURL(rec *etcd.MemberRecord) (base, why string) {
	host, port, err := net.SplitHostPort(rec.Address)
	if err != nil {
		return "", "that gateway serves no run center (http.addr), only its socket"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = rec.Host
	} else if loopback(host) {
		return "", fmt.Sprintf("its run center listens on %s, which only its own machine reaches", rec.Address)
	}
	scheme := "http"
	if rec.TLS {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port), ""
}

// peerTLS is how this gateway checks the certificate of another
// gateway's run center: the system's roots, and this gateway's own
// certificate (http.tls_cert), so that gateways sharing one certificate
// trust each other.
func (g *Gateway) peerTLS() *tls.Config {
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if c := g.cfg.File.HTTP; c.TLS() {
		if pem, err := os.ReadFile(c.TLSCert); err == nil {
			roots.AppendCertsFromPEM(pem)
		}
	}
	return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
}

// TaskLog reads a piece of task id's log wherever it is (api.TaskLogs):
// in this home, another home on this machine, or at the run center of
// the gateway that ran it (see logAt).
func (c *client) TaskLog(ctx context.Context, id string, q api.LogQuery) (api.LogChunk, error) {
	task, err := c.ResolveTask(ctx, id)
	if err != nil {
		return api.LogChunk{}, err
	}
	place := runcenter.LogPlace{Home: c.g.cfg.Home}
	if c.g.logs != nil {
		if place, err = c.g.logs(ctx, task.Gateway); err != nil {
			return api.LogChunk{}, err
		}
	}
	return runcenter.ReadLog(ctx, place, task, q)
}
