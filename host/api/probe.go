package api

import (
	"net/http"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// healthz answers that the gateway is alive: it serves requests.
func (s *server) healthz(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]bool{"ok": true}, nil
}

// readyz answers 200 when the gateway can record and start work, 503 with
// the problem when it cannot: the store does not answer, or does not take
// writes, or task files cannot be written. Writes resume by themselves once the cause is gone, and readyz
// with them.
func (s *server) readyz(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	st, err := s.c.Status(r.Context())
	if err != nil {
		return http.StatusServiceUnavailable, apitype.Readiness{Problem: "store not readable: " + err.Error()}, nil
	}
	out := apitype.Readiness{Ready: true, Store: st.Store, TaskFiles: st.TaskFiles}
	if p := st.Problem(); p != "" {
		out.Ready, out.Problem = false, p
		return http.StatusServiceUnavailable, out, nil
	}
	return http.StatusOK, out, nil
}
