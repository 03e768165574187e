package runcenter

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// pulse follows a page as server-sent events: it renders the main part
// of the page the page parameter names every Config.Pulse and sends it,
// one "data:" line a line of HTML, at once and whenever it changed. The page's own
// handler renders it, with the caller's rights, so the stream shows
// nothing the page would not.
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
	tick := time.NewTicker(s.cfg.Pulse)
	defer tick.Stop()
	var last [sha256.Size]byte
	for {
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
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
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
