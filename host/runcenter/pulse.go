package runcenter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/api"
)

// pulse follows a page as server-sent events: it renders the main part
// of the page the page parameter names and sends it, one "data:" line a
// line of HTML, at once and whenever it changed. It renders again at
// each write the client reports (api.Changes), at most once a
// Config.Settle, and every Config.Pulse when no write woke it. The
// page's own handler renders it, with the caller's rights, so the stream
// shows nothing the page would not.
func (s *Server) pulse(w http.ResponseWriter, r *http.Request) {
	target, err := url.Parse(localPath(r.URL.Query().Get("page")))
	if err != nil || strings.HasPrefix(target.Path, "/pulse") {
		http.Error(w, "400 page must be a run center page, like /gates", http.StatusBadRequest)
		return
	}
	q := target.Query()
	q.Set("part", "main")
	target.RawQuery = q.Encode()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	ctx, stop := s.streams.Context(r)
	defer stop()
	changes, _ := s.cfg.Client.(api.Changes)
	var last [sha256.Size]byte
	for {
		var changed <-chan struct{}
		if changes != nil {
			changed = changes.Changed() // taken before the render, so no write is missed
		}
		drawn := time.Now()
		inner := r.Clone(ctx)
		inner.URL, inner.RequestURI = target, target.RequestURI()
		rec := &recorder{header: http.Header{}}
		s.mux.ServeHTTP(rec, inner)
		if sum := sha256.Sum256(rec.body.Bytes()); rec.status == http.StatusOK && sum != last {
			last = sum
			if err := sendHTML(w, rec.body.Bytes()); err != nil || rc.Flush() != nil {
				return
			}
		}
		if !s.nextPulse(ctx, changed, drawn) {
			return
		}
	}
}

// nextPulse waits for the next render of a followed page drawn at drawn:
// a write (changed), but not before drawn plus Config.Settle, so that a
// burst of writes draws the page once; or Config.Pulse. It reports false
// when ctx ended first.
func (s *Server) nextPulse(ctx context.Context, changed <-chan struct{}, drawn time.Time) bool {
	t := time.NewTimer(s.cfg.Pulse)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	case <-changed:
	}
	t.Reset(time.Until(drawn.Add(s.cfg.Settle)))
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// sendHTML writes html as one event, a "data:" line for each of its lines.
func sendHTML(w http.ResponseWriter, html []byte) error {
	var b bytes.Buffer
	for line := range bytes.SplitSeq(html, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(bytes.TrimRight(line, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	if err != nil {
		return fmt.Errorf("send a page update: %w", err)
	}
	return nil
}

// recorder is a ResponseWriter that keeps what a page handler wrote.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}
