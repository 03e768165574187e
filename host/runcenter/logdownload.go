package runcenter

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/flowgate/flowgate/sdk"
)

// downloadLog serves GET /flows/{id}/logs/download?task=T&stream=S&attempt=N:
// the whole of one log file as an attachment named for the task, attempt
// and stream, read chunk by chunk from where the logs page reads it, so
// a log of any size never sits in memory whole. It takes the same task,
// stream and attempt as the logs page, and the same defaults.
func (s *Server) downloadLog(w http.ResponseWriter, r *http.Request) {
	p, place, err := s.logsOf(r)
	switch {
	case err != nil:
	case p.Task == nil:
		err = fmt.Errorf("%w: flow %s has no tasks, so no logs to download", sdk.ErrNotFound, p.FlowID)
	case p.Attempt == 0:
		err = fmt.Errorf("%w: task %s has not started yet (%s), so it has no log to download; try again once it runs", sdk.ErrNotFound, p.Task.ID, p.Task.Status)
	case p.Elsewhere != "":
		err = errors.New(p.Elsewhere)
	}
	if err == nil {
		p.Offset = 0
		err = p.load(r.Context(), place)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%d.%s.log"`, p.Task.ID, p.Attempt, p.Stream))
	w.Header().Set("Cache-Control", "no-store")
	for {
		if _, err := w.Write([]byte(p.Text)); err != nil || p.Next < 0 {
			return
		}
		p.Offset, p.Prev, p.Next = p.Next, -1, -1
		if err := p.load(r.Context(), place); err != nil {
			s.cfg.Logger.Error("download a log", "task", p.Task.ID, "error", err)
			return
		}
	}
}
