package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// deliverDest sends notice no to its one destination (no.Dest) through
// the Book, as the view a template sees, and records the outcome: done,
// failed with its next try, or, at the retry bound, given up (see
// engine.NoticeGaveUp).
func (n *Notifier) deliverDest(ctx context.Context, no engine.Notice) error {
	v := n.view(no)
	text := n.render(no, v)
	env := []string{"FLOWGATE_FLOW_ID=" + v.FlowID, "FLOWGATE_TASK_ID=" + v.TaskID, "FLOWGATE_NOTICE_STATUS=" + v.Status}
	err := n.cfg.Book.Send(ctx, no.Dest, dest.Message{Notice: v, Text: text, Env: env})
	if ctx.Err() != nil {
		return nil // stopping: the notice stays queued
	}
	shown := dest.Redact(no.Dest)
	if err == nil {
		if err := n.eng.NoticeDelivered(no.Key); err != nil {
			return err
		}
		n.cfg.Logger.Info("notice delivered", "key", no.Key, "event", no.Event, "dest", shown)
		return nil
	}
	attempt := no.Attempts + 1
	if attempt >= n.cfg.Attempts {
		// Logged once recorded, so that the log never says more than
		// the history and the audit do.
		if gerr := n.eng.NoticeGaveUp(no.Key, shown, err.Error()); gerr != nil {
			return errors.Join(err, gerr)
		}
		n.cfg.Logger.Error("notice given up: every attempt failed", "key", no.Key, "event", no.Event, "dest", shown, "attempts", attempt, "error", err)
		return err
	}
	next := n.cfg.Now().Add(n.cfg.backoff(attempt))
	n.cfg.Logger.Warn("notice not delivered; will retry", "key", no.Key, "event", no.Event, "dest", shown, "attempt", attempt, "next", next, "error", err)
	return errors.Join(err, n.eng.NoticeFailed(no.Key, err.Error(), next))
}

// render writes v with no's template; a template that fails is logged,
// and the default one's text is sent instead.
func (n *Notifier) render(no engine.Notice, v dest.Notice) string {
	tpl, err := dest.ParseTemplate(no.Template)
	if err != nil {
		n.cfg.Logger.Warn("notice template does not parse; sending the default text", "key", no.Key, "error", err)
		tpl, _ = dest.ParseTemplate("")
	}
	text, err := tpl.Render(v)
	if err != nil {
		n.cfg.Logger.Warn("notice template failed", "key", no.Key, "error", err)
	}
	return text
}

// view is what notice no tells: its own fields, and what its flow and
// task records say now (goal, times, exit code, output, and stderr's
// last lines for a failure). A record that cannot be read leaves its
// fields out: the message still goes.
func (n *Notifier) view(no engine.Notice) dest.Notice {
	v := dest.Notice{Key: no.Key, Event: no.Event, Status: no.Status, PreviousStatus: no.PreviousStatus,
		FlowID: no.FlowID, TaskID: no.TaskID, Controller: no.Controller, Milestone: no.Milestone}
	now := n.cfg.Now()
	task := n.task(no)
	if task != nil {
		v.TaskID, v.FlowID = task.ID, task.FlowID
		v.SetTimes(task.StartedAt, task.EndedAt, now)
		v.ExitCode = task.ExitCode
		if len(task.Errors) > 0 {
			v.Error = task.Errors[len(task.Errors)-1]
		}
		if r := task.Result; r != nil {
			v.SetOutput(cmpBytes(r.JSON, []byte(r.Stdout), []byte(r.Summary)))
		}
		if failure(no.Status) && n.cfg.Home != "" {
			tail, _ := runner.ReadTail(filepath.Join(runner.LogDir(n.cfg.Home, task.ID, task.Attempts), "stderr"), dest.MaxStderrBytes)
			v.StderrTail = dest.Tail([]byte(tail))
		}
	}
	if v.FlowID != "" {
		if f, err := n.eng.GetFlow(v.FlowID); err == nil {
			v.Goal = f.Goal
			v.Controller = cmp.Or(v.Controller, f.ControllerID)
			if task == nil || f.SyncMode == sdk.SyncManaged {
				v.SetTimes(f.CreatedAt, f.EndedAt, now)
			}
			if v.Error == "" && f.BlockedSummary != "" && failure(no.Status) {
				v.Error = f.BlockedSummary
			}
		}
		if n.cfg.PublicURL != "" {
			v.URL = strings.TrimRight(n.cfg.PublicURL, "/") + runcenter.FlowPath(v.FlowID)
		}
	}
	if v.Goal == "" && task != nil {
		v.Goal = task.Title()
	}
	return v
}

// task is the task notice no is about: its own, or its flow's blocking
// task, or the flow's newest.
func (n *Notifier) task(no engine.Notice) *stored.Task {
	if no.TaskID != "" {
		if t, err := n.eng.GetTask(no.TaskID); err == nil {
			return t
		}
		var t stored.Task
		if json.Unmarshal(no.Task, &t) == nil && t.ID != "" {
			return &t
		}
		return nil
	}
	if no.FlowID == "" {
		return nil
	}
	tasks, err := n.eng.FlowTasks(no.FlowID)
	if err != nil || len(tasks) == 0 {
		return nil
	}
	if f, err := n.eng.GetFlow(no.FlowID); err == nil && f.BlockedTaskID != "" {
		if i := slices.IndexFunc(tasks, func(t *stored.Task) bool { return t.ID == f.BlockedTaskID }); i >= 0 {
			return tasks[i]
		}
	}
	return slices.MaxFunc(tasks, func(a, b *stored.Task) int { return a.CreatedAt.Compare(b.CreatedAt) })
}

// failure reports whether status is one whose notice quotes stderr.
func failure(status string) bool {
	switch status {
	case string(sdk.TaskFailed), string(sdk.TaskTimedOut), string(sdk.TaskLost), string(sdk.FlowBlocked), sdk.NoticeInterrupted:
		return true
	}
	return false
}

// cmpBytes is the first of bs that is not empty.
func cmpBytes(bs ...[]byte) []byte {
	for _, b := range bs {
		if len(b) > 0 {
			return b
		}
	}
	return nil
}
