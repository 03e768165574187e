package main_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
)

// TestRunCenterOnTheNetworkNeedsAToken starts the real binary as
// `flowgate gateway --http 0.0.0.0:0` with a TLS pair. Without a token
// it must refuse to start, as a usage error that names the fix, since
// TLS alone would let anyone on the network answer gates as anonymous;
// with a token it starts, and its run center turns away a request
// without the token.
func TestRunCenterOnTheNetworkNeedsAToken(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	certPath, keyPath, cert := writeSelfSigned(t, work)
	tlsFlags := []string{"--http", "0.0.0.0:0", "--tls-cert", certPath, "--tls-key", keyPath}

	cmd := exec.Command(bin, append([]string{"gateway", "--home", home}, tlsFlags...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	polltest.Until(t, "", func() (bool, string) {
		select {
		case err = <-exited:
			return true, ""
		default:
		}
		if c, derr := api.DialRemote(gateway.SocketPath(home)); derr == nil {
			c.Close()
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("the gateway started on 0.0.0.0 with TLS and no token")
		}
		return false, "the gateway neither exited nor answered"
	}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the gateway must exit non-zero: %v\n%s", err, stderr.String())
	require.Equal(t, 2, exit.ExitCode(), stderr.String())
	require.Contains(t, stderr.String(), `http.addr "0.0.0.0:0" is not a loopback address: refusing to serve it without a token`)
	require.Contains(t, stderr.String(), "--auth-token")

	g := startGateway(t, bin, home, logf, append(tlsFlags, "--auth-token", "s3cret")...)
	defer g.kill(t)
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	st, err := c.Status(context.Background())
	c.Close()
	require.NoError(t, err)
	require.True(t, st.HTTPTLS, "the run center serves TLS")
	_, port, err := net.SplitHostPort(st.HTTPAddr)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	get := func(auth string) int {
		req, err := http.NewRequest(http.MethodGet, "https://"+net.JoinHostPort("127.0.0.1", port)+"/healthz", nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, get(""), "no token, no answer")
	require.Equal(t, http.StatusOK, get("Bearer s3cret"))
}

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
