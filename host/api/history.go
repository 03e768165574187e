package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// Historian reads flow histories (see engine.History).
type Historian interface {
	// History returns up to limit entries of flow id's history after seq
	// after, oldest first; zero limit means engine.MaxHistoryPage.
	History(ctx context.Context, id string, after int64, limit int) (apitype.HistoryPage, error)
	// FollowHistory calls fn with each entry of flow id's history after
	// seq after, oldest first, as they are appended, and returns nil once
	// the flow has ended and every entry was passed; it returns ctx's
	// error when ctx ends first, and fn's error when fn fails.
	FollowHistory(ctx context.Context, id string, after int64, fn func(apitype.HistoryEntry) error) error
}

// historyPoll is how often a follower with no change feed (see
// Local.WakeOn) looks for new entries.
const historyPoll = 200 * time.Millisecond

// History reads a page of a flow's history from the store.
func (l *Local) History(ctx context.Context, id string, after int64, limit int) (apitype.HistoryPage, error) {
	p, err := l.engine(ctx).History(id, after, limit)
	return historyPageOf(p), err
}

// WakeOn makes l's followers (FollowHistory) read again at each write ch
// reports, and otherwise every backstop: the bound on how late they see
// a write ch is not told of (another gateway's, on a shared etcd store).
// Without it they read every 200ms. It returns l.
func (l *Local) WakeOn(ch Changes, backstop time.Duration) *Local {
	l.changes, l.backstop = ch, backstop
	return l
}

// FollowHistory follows a flow's history by reading the store at every
// write WakeOn reports, or on a timer.
func (l *Local) FollowHistory(ctx context.Context, id string, after int64, fn func(apitype.HistoryEntry) error) error {
	wake, every := func() <-chan struct{} { return nil }, historyPoll
	if l.changes != nil {
		wake, every = l.changes.Changed, l.backstop
	}
	for {
		changed := wake() // taken before the read, so no write is missed
		page, err := l.engine(ctx).History(id, after, 0)
		if err != nil {
			return err
		}
		for _, e := range page.Entries {
			if err := fn(historyEntryOf(e)); err != nil {
				return err
			}
		}
		after = page.Next
		if len(page.Entries) > 0 {
			continue
		}
		if page.Status.Terminal() {
			return nil
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// History asks the gateway for a page of a flow's history.
func (c *Remote) History(ctx context.Context, id string, after int64, limit int) (apitype.HistoryPage, error) {
	if id == "" {
		return apitype.HistoryPage{}, emptyID("flow")
	}
	var out apitype.HistoryPage
	err := c.call(ctx, http.MethodGet, "/v1/flows/"+pathSegment(id)+"/history", historyQuery(after, limit), nil, &out)
	return out, err
}

func historyQuery(after int64, limit int) url.Values {
	q := url.Values{}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return q
}

// FollowHistory reads the gateway's event stream of a flow's history. The
// stream must start within the client's answer wait; then it flows as
// long as the flow goes on.
func (c *Remote) FollowHistory(ctx context.Context, id string, after int64, fn func(apitype.HistoryEntry) error) error {
	if id == "" {
		return emptyID("flow")
	}
	if c.closed.Load() {
		return fmt.Errorf("gateway client for %s: %w", c.sock, net.ErrClosed)
	}
	path := "/v1/flows/" + pathSegment(id) + "/history/stream"
	u := "http://flowgate" + path + "?" + historyQuery(after, 0).Encode()
	actx, answered, stop := untilAnswered(ctx, c.wait)
	defer stop()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("build request GET %s: %w", path, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	answered()
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return fmt.Errorf("gateway request GET %s: %w", path, late(actx, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return fmt.Errorf("read gateway answer to GET %s: %w", path, err)
		}
		return errorFromWire(resp.StatusCode, b)
	}
	err = readEvents(resp.Body, fn)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// readEvents passes the entries of a history event stream to fn until the
// stream's end event.
func readEvents(r io.Reader, fn func(apitype.HistoryEntry) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "event: "+historyEnd:
			event = historyEnd
		case strings.HasPrefix(line, "data: ") && event == historyEnd:
			return nil
		case strings.HasPrefix(line, "data: "):
			var e apitype.HistoryEntry
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
				return fmt.Errorf("the gateway's history stream sent an entry this client cannot read: %w; are the CLI and gateway the same version?", err)
			}
			if err := fn(e); err != nil {
				return err
			}
		case line == "":
			event = ""
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("the gateway's history stream broke off: %w", err)
	}
	return fmt.Errorf("the gateway's history stream ended before the flow did; see the gateway's log")
}

// StreamStop ends the open streams when the server that serves them
// shuts down, which otherwise waits for every connection to go idle: a
// follower would hold a gateway's Stop until its deadline. One handler
// may be served by several servers (the gateway's socket and its web
// listener); each server's shutdown ends only its own streams. The zero
// value is ready to use.
type StreamStop struct {
	mu sync.Mutex
	// ends holds, per server that served a stream, a context ended when
	// that server shuts down.
	ends map[*http.Server]context.Context
}

// Context returns r's context, ended also when the server that serves r
// shuts down, and its cancel function.
func (ss *StreamStop) Context(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
	if !ok {
		return ctx, cancel
	}
	unhook := context.AfterFunc(ss.end(srv), cancel)
	return ctx, func() { unhook(); cancel() }
}

// end returns the context that ends when srv shuts down, hooking it into
// srv on first use.
func (ss *StreamStop) end(srv *http.Server) context.Context {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ctx, ok := ss.ends[srv]; ok {
		return ctx
	}
	if ss.ends == nil {
		ss.ends = map[*http.Server]context.Context{}
	}
	ctx, stop := context.WithCancel(context.Background())
	srv.RegisterOnShutdown(stop)
	ss.ends[srv] = ctx
	return ctx
}

// historyEnd is the event a history stream ends with once its flow has
// ended and every entry was sent.
const historyEnd = "end"

func (s *server) history(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	after, limit, err := historyParams(r, "after", "limit")
	if err != nil {
		return 0, nil, err
	}
	page, err := s.c.History(r.Context(), r.PathValue("id"), after, limit)
	return http.StatusOK, page, err
}

// historyParams reads the after and limit query parameters.
func historyParams(r *http.Request, names ...string) (int64, int, error) {
	q, err := parseQuery(r, names...)
	if err != nil {
		return 0, 0, err
	}
	var after int64
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return 0, 0, fmt.Errorf("%w: after %q is not a history seq (a whole number of at least 0)", sdk.ErrInvalid, v)
		}
	}
	limit, err := parseLimit(q.Get("limit"))
	return after, limit, err
}

// historyStream serves a flow's history as server-sent events: one
// "data:" line of JSON per entry, its seq as the event id, and an "end"
// event once the flow has ended and every entry was sent. A client that
// reconnects with Last-Event-ID (or after) resumes after that entry.
func (s *server) historyStream(w http.ResponseWriter, r *http.Request) {
	after, _, err := historyParams(r, "after")
	if err == nil && r.Header.Get("Last-Event-ID") != "" {
		after, err = strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	}
	id := r.PathValue("id")
	if err == nil {
		// A missing flow is refused before the stream starts.
		_, err = s.c.History(r.Context(), id, after, 1)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, stop := s.streams.Context(r)
	defer stop()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(e apitype.HistoryEntry) error {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", e.Seq, b); err != nil {
			return err
		}
		return rc.Flush()
	}
	_ = rc.Flush()
	err = s.c.FollowHistory(ctx, id, after, send)
	if err == nil {
		_, err = fmt.Fprintf(w, "event: %s\ndata: {}\n\n", historyEnd)
		_ = rc.Flush()
	}
	if err != nil && r.Context().Err() == nil {
		s.log.Debug("history stream stopped", "flow", id, "error", err)
	}
}
