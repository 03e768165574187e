package gateway_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/runcenter"
)

// writeSelfSigned writes a certificate for 127.0.0.1 and its key as PEM
// files in dir and returns their paths and the certificate.
func writeSelfSigned(t *testing.T, dir string) (certPath, keyPath string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "flowgate test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certPath, keyPath, cert
}

// With a TLS pair the listener serves HTTPS only; a pair that cannot be
// loaded fails Start, naming the files.
func TestHTTPListenerServesTLS(t *testing.T) {
	t.Parallel()
	certPath, keyPath, cert := writeSelfSigned(t, t.TempDir())
	g, _, _ := startHTTPGateway(t, gateway.HTTPConfig{Addr: "127.0.0.1:0", TLSCert: certPath, TLSKey: keyPath})
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := client.Get("https://" + g.HTTPAddr() + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = http.Get("http://" + g.HTTPAddr() + "/healthz")
	if err == nil {
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP is not served")
	}

	home, err := os.MkdirTemp("", "fgtls") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	var fc gateway.FileConfig
	fc.HTTP = gateway.HTTPConfig{Addr: "127.0.0.1:0", TLSCert: keyPath, TLSKey: keyPath}
	bad, err := gateway.New(gateway.Config{Home: home, File: fc, Launch: testLaunch})
	require.NoError(t, err)
	require.ErrorContains(t, bad.Start(t.Context()), "http: load the TLS pair "+keyPath)
}

// Over TLS the run center's login cookie is Secure, so a browser never
// sends it over plain HTTP; gateway status reports the https URL.
func TestLoginCookieIsSecureOverTLS(t *testing.T) {
	t.Parallel()
	certPath, keyPath, cert := writeSelfSigned(t, t.TempDir())
	g, c, _ := startHTTPGateway(t, gateway.HTTPConfig{Addr: "127.0.0.1:0", TLSCert: certPath, TLSKey: keyPath,
		Tokens: []runcenter.Token{{Name: "alice", Token: "alice-token"}}})
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	base := "https://" + g.HTTPAddr()
	resp, err := client.Get(base + "/login")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	require.NotNil(t, m)
	resp, err = client.PostForm(base+"/login", url.Values{"csrf": {string(m[1])}, "token": {"alice-token"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Len(t, resp.Cookies(), 1)
	require.True(t, resp.Cookies()[0].Secure)
	require.True(t, resp.Cookies()[0].HttpOnly)

	st, err := c.Status(t.Context())
	require.NoError(t, err)
	require.Equal(t, base+"/", st.HTTPURL())
}
