package runcenter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"

	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// logChunk is how many bytes of a log one page shows.
const logChunk = 64 << 10

// logsPage is the data of a task's log page.
type logsPage struct {
	FlowID  string
	Task    *stored.Task
	Tasks   []*stored.Task
	Attempt int
	Stream  string
	// Follow shows the log's last chunk, which the page's pulse draws
	// again as the log grows: a live tail.
	Follow bool
	Offset int64
	Size   int64
	Text   string
	// Prev and Next are the offsets of the neighbouring chunks; -1 when
	// there is none.
	Prev, Next int64
	// Elsewhere says why the log cannot be shown: where it is when that
	// is the home of a gateway not reachable from this one, or what
	// failed reading it.
	Elsewhere string
}

// logsPage reads one chunk of a task's stdout or stderr, from the task's
// log files as `flowgate tasks logs` does: the task the task parameter
// names (default the flow's first failed task, else its first), the
// attempt (default its latest), the stream (stdout or stderr; default
// stderr for a failed task, where its error is, and stdout otherwise)
// and the byte offset, or with follow set the last chunk. The files are
// where Config.LogAt says: in a home on this machine, or at the run
// center of the gateway that ran the task.
func (s *Server) logsPage(r *http.Request) (string, any, error) {
	p, place, err := s.logsOf(r)
	if err != nil || p.Task == nil || p.Attempt == 0 || p.Elsewhere != "" {
		return "Logs of " + p.FlowID, p, err
	}
	err = p.load(r.Context(), place)
	if err == nil && p.Follow && p.Size > logChunk {
		p.Offset = p.Size - logChunk
		err = p.load(r.Context(), place)
	}
	if err != nil {
		p.Elsewhere = err.Error()
	}
	return "Logs of " + p.FlowID, p, nil
}

// logsOf reads which log r asks for: the flow, task, stream, attempt and
// offset of a logs page or download, and where the task's files are. A
// flow without tasks, or a task not started yet, has no place.
func (s *Server) logsOf(r *http.Request) (logsPage, LogPlace, error) {
	v, err := s.cfg.Client.ViewFlow(r.Context(), r.PathValue("id"))
	if err != nil {
		return logsPage{}, LogPlace{}, err
	}
	q := r.URL.Query()
	p := logsPage{FlowID: v.ID, Tasks: v.Tasks, Prev: -1, Next: -1, Follow: q.Get("follow") != ""}
	for _, t := range v.Tasks {
		if t.ID == q.Get("task") || (q.Get("task") == "" && p.Task == nil) {
			p.Task = t
		}
	}
	if q.Get("task") == "" {
		for _, t := range v.Tasks {
			if t.Status.Failure() {
				p.Task = t // the failure is what the reader came for
				break
			}
		}
	}
	if p.Task == nil {
		if q.Get("task") != "" {
			return p, LogPlace{}, fmt.Errorf("%w: flow %s has no task %q; pick one of the flow's tasks", sdk.ErrNotFound, v.ID, q.Get("task"))
		}
		return p, LogPlace{}, nil
	}
	if q.Get("stream") == "" && p.Task.Status.Failure() {
		q.Set("stream", "stderr")
	}
	if err := p.parse(q); err != nil || p.Attempt == 0 {
		return p, LogPlace{}, err
	}
	place, err := s.logAt(r.Context(), p.Task)
	if err != nil {
		p.Elsewhere = err.Error()
	}
	return p, place, nil
}

// parse reads the stream, attempt and offset of q into p, whose Task is
// set: stdout, the task's latest attempt and 0 when absent.
func (p *logsPage) parse(q url.Values) error {
	p.Stream = q.Get("stream")
	if p.Stream == "" {
		p.Stream = "stdout"
	}
	if p.Stream != "stdout" && p.Stream != "stderr" {
		return fmt.Errorf("%w: stream %q is not stdout or stderr", sdk.ErrInvalid, p.Stream)
	}
	p.Attempt = p.Task.Attempts
	if a := q.Get("attempt"); a != "" {
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 || n > p.Task.Attempts {
			return fmt.Errorf("%w: attempt %q: task %s has attempts 1 to %d", sdk.ErrInvalid, a, p.Task.ID, p.Task.Attempts)
		}
		p.Attempt = n
	}
	if o := q.Get("offset"); o != "" {
		n, err := strconv.ParseInt(o, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: offset %q is not a byte offset", sdk.ErrInvalid, o)
		}
		p.Offset = n
	}
	return nil
}

// logAt is where task's log files are (Config.LogAt).
func (s *Server) logAt(ctx context.Context, task *stored.Task) (LogPlace, error) {
	if s.cfg.LogAt == nil {
		return LogPlace{Home: s.cfg.Home}, nil
	}
	return s.cfg.LogAt(ctx, task.Gateway)
}

// read fills in the chunk of file at p.Offset and the neighbours' offsets.
// A file that does not exist (yet) reads as empty; one that is not a
// regular file (the task replaced it) is refused (see
// shim.OpenTaskFile).
func (p *logsPage) read(file string) error {
	f, err := shim.OpenTaskFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the log %s: %w", file, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read the log %s: %w", file, err)
	}
	p.Size = st.Size()
	buf := make([]byte, logChunk)
	n, err := f.ReadAt(buf, p.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the log %s: %w", file, err)
	}
	p.Text = string(buf[:n])
	p.pages()
	return nil
}

// pages sets the neighbours' offsets of the chunk p holds.
func (p *logsPage) pages() {
	if p.Offset > 0 {
		p.Prev = max(0, p.Offset-logChunk)
	}
	if p.Offset+int64(len(p.Text)) < p.Size {
		p.Next = p.Offset + int64(len(p.Text))
	}
}
