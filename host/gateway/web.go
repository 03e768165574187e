package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// web is the gateway's TCP listener, a lifecycle part: it serves its
// handler (guarded by the run center's tokens, see webHandler) on
// cfg.Addr, over TLS when cfg has a certificate. Start and Stop are
// idempotent.
type web struct {
	cfg     HTTPConfig
	handler http.Handler
	log     hclog.Logger
	// addr is where it publishes the address it serves on (with the
	// port it picked for port 0), cleared when it stops; Gateway.HTTPAddr
	// reads it without the web's lock.
	addr *atomic.Pointer[string]

	mu     sync.Mutex
	srv    *http.Server
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
	addr := ln.Addr().String()
	w.addr.Store(&addr)
	w.srv = &http.Server{Handler: w.handler, ReadHeaderTimeout: 10 * time.Second}
	w.served = make(chan struct{})
	srv, served := w.srv, w.served
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.log.Error("http listener", "error", err)
		}
	}()
	w.log.Info("http listener started", "addr", addr, "tls", w.cfg.TLS(), "tokens", len(w.cfg.AllTokens()))
	return nil
}

// Stop stops listening and waits for requests in flight, bounded by ctx.
func (w *web) Stop(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv == nil {
		return nil
	}
	w.addr.Store(nil)
	err := w.srv.Shutdown(ctx)
	<-w.served
	w.srv = nil
	return err
}
