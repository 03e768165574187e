package gateway

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// web is the gateway's TCP listener, a lifecycle part: it serves its
// handler on cfg.Addr, over TLS when cfg has a certificate, behind the
// bearer token when cfg has one. Start and Stop are idempotent.
type web struct {
	cfg     HTTPConfig
	handler http.Handler
	log     hclog.Logger

	mu     sync.Mutex
	srv    *http.Server
	addr   net.Addr
	served chan struct{}
}

// Start listens on the address and serves in the background. It fails
// when the address cannot be bound or the TLS pair cannot be loaded,
// naming which.
func (w *web) Start(context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv != nil {
		return nil
	}
	var tlsCfg *tls.Config
	if w.cfg.TLS() {
		pair, err := tls.LoadX509KeyPair(w.cfg.TLSCert, w.cfg.TLSKey)
		if err != nil {
			return fmt.Errorf("http: load the TLS pair %s and %s: %w", w.cfg.TLSCert, w.cfg.TLSKey, err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", w.cfg.Addr)
	if err != nil {
		return fmt.Errorf("http: listen on %s: %w; pick a free address with --http", w.cfg.Addr, err)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	w.addr = ln.Addr()
	w.srv = &http.Server{Handler: requireToken(w.cfg.AuthToken, w.handler), ReadHeaderTimeout: 10 * time.Second}
	w.served = make(chan struct{})
	srv, served := w.srv, w.served
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.log.Error("http listener", "error", err)
		}
	}()
	w.log.Info("http listener started", "addr", w.addr.String(), "tls", w.cfg.TLS(), "auth_token", w.cfg.AuthToken != "")
	return nil
}

// Stop stops listening and waits for requests in flight, bounded by ctx.
func (w *web) Stop(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv == nil {
		return nil
	}
	err := w.srv.Shutdown(ctx)
	<-w.served
	w.srv = nil
	return err
}

// Addr is the address listened on, or "" when stopped.
func (w *web) Addr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv == nil {
		return ""
	}
	return w.addr.String()
}

// requireToken answers 401 to a request that does not carry token as a
// bearer token; an empty token lets every request through.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			rw.Header().Set("WWW-Authenticate", `Bearer realm="flowgate"`)
			http.Error(rw, "401 unauthorized: send the gateway's auth token as Authorization: Bearer TOKEN (the --auth-token or http.auth_token it was started with)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(rw, r)
	})
}
