package gateway

import (
	"net/http"

	"github.com/flowgate/flowgate/host/lifecycle"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/host/trigger"
)

// socketHandler is the API socket's handler: the API, and /metrics for
// local scraping.
func (g *Gateway) socketHandler(apiHandler http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", g.metrics.Handler())
	mux.Handle("/", apiHandler)
	return mux
}

// webHandler is the TCP listener's handler: the run center, the API's
// history stream it follows, /metrics and the probes, all behind the run
// center's guard (tokens, CSRF, security headers); and the triggers'
// POST /hooks/{name}, which each trigger guards itself.
func (g *Gateway) webHandler(apiHandler http.Handler) (http.Handler, error) {
	c := g.cfg.File.HTTP
	rc, err := runcenter.New(runcenter.Config{Client: g.client(), Home: g.cfg.Home, LogAt: g.logs,
		Tokens: c.AllTokens(), Secure: c.TLS(), Logger: g.cfg.Logger.Named("runcenter")})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", g.metrics.Handler())
	mux.Handle("GET /healthz", apiHandler)
	mux.Handle("GET /readyz", apiHandler)
	mux.Handle("GET /v1/flows/{id}/history/stream", apiHandler)
	mux.Handle("/", rc)
	// Deliveries carry their own proof (the trigger's HMAC or token), not
	// a run center token or session, so they bypass the guard.
	outer := http.NewServeMux()
	outer.Handle("POST /hooks/{name}", trigger.NewHooks(trigger.HooksConfig{Triggers: trigger.New(g.eng, nil),
		Observe: g.metrics.TriggerDelivery, Logger: g.cfg.Logger.Named("trigger")}))
	outer.Handle("/", rc.Guard(mux))
	return outer, nil
}

// newWeb is the TCP listener over apiHandler as the part to start, when
// the config names an address; none when it does not.
func (g *Gateway) newWeb(apiHandler http.Handler) ([]lifecycle.Named, error) {
	c := g.cfg.File.HTTP
	if c.Addr == "" {
		return nil, nil
	}
	h, err := g.webHandler(apiHandler)
	if err != nil {
		return nil, err
	}
	w := &web{cfg: c, handler: h, log: g.cfg.Logger.Named("http"), addr: &g.httpAddr}
	return []lifecycle.Named{{Name: "web listener", Part: w}}, nil
}

// HTTPAddr is the address the TCP listener serves on (with the port it
// picked when the config asked for port 0), or "" when the listener is
// off or the gateway is stopped.
func (g *Gateway) HTTPAddr() string {
	if a := g.httpAddr.Load(); a != nil {
		return *a
	}
	return ""
}
