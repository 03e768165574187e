package api

import (
	"net/http"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// Readiness is the answer of /readyz: whether the gateway can do its work
// now and, when not, why.
type Readiness struct {
	// Ready is true when the gateway can record work.
	Ready bool `json:"ready"`
	// Problem says why it cannot ("store not writable: disk full; …");
	// empty when Ready.
	Problem string `json:"problem,omitempty"`
	// Store is the state of the store's writes, when the client knows it.
	Store *apitype.WriteHealth `json:"store,omitempty"`
	// TaskFiles is the state of the writes of task files, when the
	// client knows it.
	TaskFiles *apitype.WriteHealth `json:"task_files,omitempty"`
}

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
		return http.StatusServiceUnavailable, Readiness{Problem: "store not readable: " + err.Error()}, nil
	}
	out := Readiness{Ready: true, Store: st.Store, TaskFiles: st.TaskFiles}
	if p := st.Problem(); p != "" {
		out.Ready, out.Problem = false, p
		return http.StatusServiceUnavailable, out, nil
	}
	return http.StatusOK, out, nil
}
