package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/api"
)

// socket is the gateway's API socket as a lifecycle part, the last to
// start and the first to stop, so a client that reaches the gateway finds
// every other part running. Start listens on path (api.Listen: a socket
// left by a gateway that crashed is removed, a live one or a file that
// is no socket is refused) and serves handler in the background; Stop
// stops serving, waits for requests in flight, bounded by ctx, and so
// removes the socket file. The gateway starts and stops it with its mu
// held, which serialises both.
type socket struct {
	path    string
	handler http.Handler
	log     hclog.Logger

	srv    *http.Server // nil while stopped
	served chan struct{}
}

// Start listens and serves; it does nothing when serving.
func (s *socket) Start(context.Context) error {
	if s.srv != nil {
		return nil
	}
	ln, err := api.Listen(s.path)
	if err != nil {
		return err
	}
	s.srv = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.served = make(chan struct{})
	srv, served := s.srv, s.served
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("api server", "error", err)
		}
	}()
	return nil
}

// Stop stops serving and waits for requests in flight, or for ctx.
func (s *socket) Stop(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	<-s.served
	s.srv = nil
	return err
}
