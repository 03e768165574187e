package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
)

// backupSizeTrailer is the HTTP trailer in which GET /v1/backup sends the
// length of the copy once it is complete. A stream without it broke off.
const backupSizeTrailer = "Flowgate-Backup-Size"

// backup streams a copy of the store: 200 with the bytes as
// application/octet-stream and the size in a trailer. A failure before the
// first byte is answered as a JSON error; one after it aborts the
// connection, so the client sees a broken stream, never a short copy that
// looks whole.
func (s *server) backup(w http.ResponseWriter, r *http.Request) {
	if _, err := parseQuery(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	sw := &streamWriter{w: w}
	n, err := s.c.Backup(r.Context(), sw)
	switch {
	case err == nil:
		sw.start()
		w.Header().Set(backupSizeTrailer, strconv.FormatInt(n, 10))
	case !sw.started:
		s.writeError(w, r, err)
	default:
		if r.Context().Err() == nil {
			s.log.Error("backup stream failed", "bytes", n, "error", err)
		}
		panic(http.ErrAbortHandler)
	}
}

// streamWriter sends the headers of a stream with its first byte.
type streamWriter struct {
	w       http.ResponseWriter
	started bool
}

func (s *streamWriter) start() {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", "application/octet-stream")
		s.w.Header().Set("Trailer", backupSizeTrailer)
		s.w.WriteHeader(http.StatusOK)
	}
}

func (s *streamWriter) Write(p []byte) (int, error) {
	s.start()
	return s.w.Write(p)
}

// Backup streams a copy of the store from the gateway into w. A stream that
// breaks off (the gateway stopped or failed midway) is an error, never a
// short copy. The stream must start within the client's answer wait; then
// it takes as long as the copy does.
func (c *Remote) Backup(ctx context.Context, w io.Writer) (int64, error) {
	if c.closed.Load() {
		return 0, fmt.Errorf("gateway client for %s: %w", c.sock, net.ErrClosed)
	}
	actx, answered, stop := untilAnswered(ctx, c.wait)
	defer stop()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, "http://flowgate/v1/backup", nil)
	if err != nil {
		return 0, fmt.Errorf("build request GET /v1/backup: %w", err)
	}
	req.Header.Set("Accept", "application/octet-stream")
	resp, err := c.hc.Do(req)
	answered()
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return 0, fmt.Errorf("gateway request GET /v1/backup: %w", late(actx, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, fmt.Errorf("read gateway answer to GET /v1/backup: %w", err)
		}
		return 0, errorFromWire(resp.StatusCode, b)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("the gateway's backup stream broke off after %d bytes: %w", n, err)
	}
	if want := resp.Trailer.Get(backupSizeTrailer); want != strconv.FormatInt(n, 10) {
		return n, fmt.Errorf("the gateway's backup stream ended after %d bytes without saying it was complete (size %q); see the gateway's log", n, want)
	}
	return n, nil
}
