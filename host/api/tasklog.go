package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// TaskLogs is offered beside Client by a gateway's clients, in process
// and over its socket (GET /v1/tasks/{id}/log): they read a task's log
// wherever it is, from this gateway's home, another home on its machine,
// or the run center of the gateway that ran it on another machine. A
// command's own store (Local) does not offer it: it reads its home.
type TaskLogs interface {
	// TaskLog reads a piece of task id's log. It fails with sdk.ErrInvalid
	// for a bad stream, attempt or offset, and with an error that says
	// where the log is when the gateway cannot reach it.
	TaskLog(ctx context.Context, id string, q apitype.LogQuery) (apitype.LogChunk, error)
}

var _ TaskLogs = (*Remote)(nil)

// taskLog serves GET /v1/tasks/{id}/log?stream=S&attempt=N&offset=B.
func (s *server) taskLog(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := parseQuery(r, "stream", "attempt", "offset")
	if err != nil {
		return 0, nil, err
	}
	tl, ok := s.c.(TaskLogs)
	if !ok {
		return 0, nil, fmt.Errorf("%w: this gateway reads no task logs; read the files in its home", sdk.ErrNotFound)
	}
	lq := apitype.LogQuery{Stream: q.Get("stream")}
	if a := q.Get("attempt"); a != "" {
		if lq.Attempt, err = strconv.Atoi(a); err != nil {
			return 0, nil, fmt.Errorf("%w: attempt %q is not a number", sdk.ErrInvalid, a)
		}
	}
	if o := q.Get("offset"); o != "" {
		if lq.Offset, err = strconv.ParseInt(o, 10, 64); err != nil {
			return 0, nil, fmt.Errorf("%w: offset %q is not a byte offset", sdk.ErrInvalid, o)
		}
	}
	chunk, err := tl.TaskLog(r.Context(), r.PathValue("id"), lq)
	return http.StatusOK, chunk, err
}

// TaskLog asks the gateway for a piece of task id's log (TaskLogs).
func (c *Remote) TaskLog(ctx context.Context, id string, q apitype.LogQuery) (apitype.LogChunk, error) {
	v := url.Values{"offset": {strconv.FormatInt(q.Offset, 10)}}
	if q.Stream != "" {
		v.Set("stream", q.Stream)
	}
	if q.Attempt != 0 {
		v.Set("attempt", strconv.Itoa(q.Attempt))
	}
	var out apitype.LogChunk
	err := c.call(ctx, http.MethodGet, "/v1/tasks/"+pathSegment(id)+"/log", v, nil, &out)
	return out, err
}
