package runcenter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/stored"
)

// LogSizeHeader carries the size of the whole log file with a chunk the
// raw log route (GET /tasks/{id}/log) answers.
const LogSizeHeader = "X-Flowgate-Log-Size"

// LogPlace is where a task's log files are (Config.LogAt): in the home
// Home on this machine, or, when URL is set, in the home of the gateway
// whose run center URL is (such as https://node-b:7070), asked with
// Client and the bearer Token (none when empty).
type LogPlace struct {
	Home   string
	URL    string
	Token  string
	Client *http.Client
	// Where names the host and gateway that hold the log, for the
	// message shown when asking them fails: "host node-b (gateway
	// node-b.977)".
	Where string
}

// rawLog serves GET /tasks/{id}/log?attempt=N&stream=S&offset=B: one
// chunk (logChunk bytes) of a task's log from this gateway's home, as
// plain text, with the file's size in LogSizeHeader. It is what the logs
// page of another gateway asks for a task this one ran (LogPlace.URL).
// A file that does not exist (yet) is empty.
func (s *Server) rawLog(w http.ResponseWriter, r *http.Request) {
	task, err := s.cfg.Client.ResolveTask(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := logsPage{Task: task, Prev: -1, Next: -1}
	err = p.parse(r.URL.Query())
	if err == nil {
		err = p.load(r.Context(), LogPlace{Home: s.cfg.Home})
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set(LogSizeHeader, strconv.FormatInt(p.Size, 10))
	_, _ = io.WriteString(w, p.Text)
}

// ReadLog reads a piece of task's log (up to 64 KiB) from where place
// says, as the logs page does: what a gateway's clients answer
// api.TaskLogs with. It fails with sdk.ErrInvalid for a bad stream,
// attempt or offset, and, when place is another gateway's run center
// that cannot be asked, with an error that says where the log is. A task
// not started yet, or a file not written yet, reads as empty.
func ReadLog(ctx context.Context, place LogPlace, task *stored.Task, q api.LogQuery) (api.LogChunk, error) {
	p := logsPage{Task: task, Prev: -1, Next: -1}
	v := url.Values{"stream": {q.Stream}, "offset": {strconv.FormatInt(q.Offset, 10)}}
	if q.Attempt != 0 {
		v.Set("attempt", strconv.Itoa(q.Attempt))
	}
	if err := p.parse(v); err != nil {
		return api.LogChunk{}, err
	}
	err := p.load(ctx, place)
	return api.LogChunk{Text: p.Text, Size: p.Size, Attempt: p.Attempt}, err
}

// load fills in p's chunk of the log from where place says; nothing for
// a task not started yet (p.Attempt 0).
func (p *logsPage) load(ctx context.Context, place LogPlace) error {
	switch {
	case p.Attempt == 0:
		return nil
	case place.URL != "":
		return p.fetch(ctx, place)
	default:
		return p.read(filepath.Join(runner.LogDir(place.Home, p.Task.ID, p.Attempt), p.Stream))
	}
}

// fetch fills in p's chunk from the run center at place.URL (rawLog
// there). Its failure says which gateway holds the log, at which address,
// and what went wrong.
func (p *logsPage) fetch(ctx context.Context, place LogPlace) error {
	q := url.Values{"attempt": {strconv.Itoa(p.Attempt)}, "stream": {p.Stream}, "offset": {strconv.FormatInt(p.Offset, 10)}}
	u := strings.TrimSuffix(place.URL, "/") + "/tasks/" + url.PathEscape(p.Task.ID) + "/log?" + q.Encode()
	unreachable := func(why string) error {
		return fmt.Errorf("the log of this task is on %s, which is not reachable from here: asking its run center at %s %s", place.Where, place.URL, why)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return unreachable(fmt.Sprintf("failed: %v", err))
	}
	if place.Token != "" {
		req.Header.Set("Authorization", "Bearer "+place.Token)
	}
	resp, err := place.Client.Do(req)
	if err != nil {
		return unreachable(fmt.Sprintf("failed: %v", err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, logChunk))
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return unreachable("was refused this gateway's token: give the gateways the same http tokens")
	case resp.StatusCode != http.StatusOK:
		return unreachable(fmt.Sprintf("was answered %s", resp.Status))
	case err != nil:
		return unreachable(fmt.Sprintf("failed while reading: %v", err))
	}
	if p.Size, err = strconv.ParseInt(resp.Header.Get(LogSizeHeader), 10, 64); err != nil {
		return unreachable(fmt.Sprintf("was answered without the log's size (%s): is it a flowgate gateway of this version?", LogSizeHeader))
	}
	p.Text = string(body)
	p.pages()
	return nil
}
