package gateway_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
)

// A TCP listener on any address but loopback is refused unless it has a
// token, TLS or not, with a message that says what to set; loopback
// needs neither. The gateway itself refuses such a config before opening
// anything.
func TestHTTPListenerRefusesAnOpenNonLoopbackBind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  gateway.HTTPConfig
		want string // "" when valid
	}{
		{gateway.HTTPConfig{}, ""},
		{gateway.HTTPConfig{Addr: "127.0.0.1:7070"}, ""},
		{gateway.HTTPConfig{Addr: "[::1]:7070"}, ""},
		{gateway.HTTPConfig{Addr: "localhost:7070"}, ""},
		{gateway.HTTPConfig{Addr: "0.0.0.0:7070", AuthToken: "t"}, ""},
		{gateway.HTTPConfig{Addr: "10.1.2.3:7070", TLSCert: "c.pem", TLSKey: "k.pem", AuthToken: "t"}, ""},
		{gateway.HTTPConfig{Addr: "10.1.2.3:7070", TLSCert: "c.pem", TLSKey: "k.pem"}, `http.addr "10.1.2.3:7070" is not a loopback address: refusing to serve it without a token`},
		{gateway.HTTPConfig{Addr: "0.0.0.0:7070"}, `http.addr "0.0.0.0:7070" is not a loopback address: refusing to serve it without a token, since TLS encrypts but does not say who may approve, deny or cancel; set an auth token (--auth-token`},
		{gateway.HTTPConfig{Addr: ":7070"}, "is not a loopback address"},
		{gateway.HTTPConfig{Addr: "example.com:7070"}, "is not a loopback address"},
		{gateway.HTTPConfig{Addr: "127.0.0.1"}, "is not host:port"},
		{gateway.HTTPConfig{Addr: "127.0.0.1:7070", TLSCert: "c.pem"}, "set both tls_cert and tls_key"},
		{gateway.HTTPConfig{AuthToken: "t"}, "no address to listen on"},
	} {
		err := tc.cfg.Validate()
		if tc.want == "" {
			require.NoError(t, err, "%+v", tc.cfg)
			continue
		}
		require.ErrorContains(t, err, tc.want, "%+v", tc.cfg)
	}
	var fc gateway.FileConfig
	fc.HTTP.Addr = "0.0.0.0:0"
	_, err := gateway.New(gateway.Config{Home: t.TempDir(), File: fc})
	require.ErrorContains(t, err, "is not a loopback address")
}

// The http: section of the config file is read and checked.
func TestConfigHTTPSection(t *testing.T) {
	t.Parallel()
	fc, err := gateway.LoadConfig(writeConfig(t, "http:\n  addr: 127.0.0.1:7070\n  auth_token: s3cret\n"))
	require.NoError(t, err)
	require.Equal(t, gateway.HTTPConfig{Addr: "127.0.0.1:7070", AuthToken: "s3cret"}, fc.HTTP)
	_, err = gateway.LoadConfig(writeConfig(t, "http:\n  addr: 0.0.0.0:7070\n"))
	require.ErrorContains(t, err, "is not a loopback address")
}

// With a token set, a request without it, or with a wrong one, gets 401
// on every route; with it, the metrics and probes answer.
func TestHTTPListenerNeedsTheToken(t *testing.T) {
	t.Parallel()
	g, _, _ := startHTTPGateway(t, gateway.HTTPConfig{Addr: "127.0.0.1:0", AuthToken: "s3cret"})
	base := "http://" + g.HTTPAddr()
	get := func(path, auth string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/v1/status"} {
		for _, auth := range []string{"", "Bearer wrong", "s3cret", "Basic czNjcmV0"} {
			code, body := get(path, auth)
			require.Equal(t, http.StatusUnauthorized, code, "%s with %q", path, auth)
			require.Contains(t, body, "Authorization: Bearer", "the refusal says what to send")
		}
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		code, body := get(path, "Bearer s3cret")
		require.Equal(t, http.StatusOK, code, "%s: %s", path, body)
	}
	code, _ := get("/v1/status", "Bearer s3cret")
	require.Equal(t, http.StatusNotFound, code, "the TCP listener serves no API route yet")
}

// An address that cannot be bound fails Start with an error naming it,
// and leaves nothing behind: the socket is gone and the store is free, so
// the same gateway starts once the address is.
func TestHTTPListenerThatCannotBindStopsTheGateway(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	home, err := os.MkdirTemp("", "fgbind") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	var fc gateway.FileConfig
	fc.HTTP.Addr = taken.Addr().String()
	g, err := gateway.New(gateway.Config{Home: home, File: fc, Launch: testLaunch})
	require.NoError(t, err)
	ctx := context.Background()
	err = g.Start(ctx)
	require.ErrorContains(t, err, "http: listen on "+fc.HTTP.Addr)
	require.NoFileExists(t, gateway.SocketPath(home), "a gateway that did not start serves nothing")
	require.Empty(t, g.HTTPAddr())

	require.NoError(t, taken.Close())
	require.NoError(t, g.Start(ctx), "the store was released")
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	require.Equal(t, fc.HTTP.Addr, g.HTTPAddr())
}
