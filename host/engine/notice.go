package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The notice outbox. A task whose spec asks for finish notifications
// (sdk.TaskSpec.OnFinish) gets one notice when it is interrupted
// (sdk.NoticeInterrupted) and one when it ends (its terminal status, or
// sdk.NoticeAborted for a cancel), written under "notice/<task>/<status>"
// in the transaction that records the change. A flow that asks for them
// (sdk.Flow.OnFinish) gets one when it ends, under "notice/<flow>/<status>",
// in the transaction that records its terminal status; and when the
// flow's controller has one configured (SetControllerNotices), another
// under "notice/<flow>/<status>/controller". A deliverer
// (host/notify) sends what is due and marks it delivered, which deletes
// it; a crash between the two sends it again, with the same key, so
// delivery is at least once and a receiver dedupes on (run, status).
const noticePrefix = "notice/"

// Notice is one queued finish notification, of a task or of a flow.
type Notice struct {
	// Key names the notice: "<task or flow id>/<status>". It is the
	// idempotency key a receiver dedupes on.
	Key string `json:"key"`
	// TaskID is the task's id in a task's notice; FlowID the flow's in a
	// flow's (and only there).
	TaskID string `json:"task_id,omitempty"`
	FlowID string `json:"flow_id,omitempty"`
	// Controller names the controller whose configuration asked for this
	// notice of a flow it drives; empty for a notice the flow or task
	// asked for itself.
	Controller string `json:"controller,omitempty"`
	Status     string `json:"status"`
	// To is where a finish notice the task or flow asked for goes (its
	// command, its webhook). It is nil when Dest is set.
	To *sdk.FinishNotify `json:"to"`
	// Dest, when set, is the one destination this notice goes to: a name
	// from the gateway's notify config, a shoutrrr or http(s) URL, or
	// "cmd:COMMAND", with ${VAR} refs to the gateway's environment for
	// its secrets. A flow's notify policy, a task's milestones and a cron
	// job's announcements queue one notice per destination, so that one
	// destination that fails does not resend to the others.
	Dest string `json:"dest,omitempty"`
	// Event is what a notice with Dest reports: "flow.status" (a status
	// change under the state_changes policy), "flow.finished" or
	// "task.milestone".
	Event string `json:"event,omitempty"`
	// Milestone names the milestone a task.milestone notice reports.
	Milestone string `json:"milestone,omitempty"`
	// PreviousStatus is the status a flow.status notice's flow left.
	PreviousStatus string `json:"previous_status,omitempty"`
	// Template is the Go text/template a chat or mail destination's text
	// is written from; empty means the default one.
	Template string `json:"template,omitempty"`
	// Task is the task's record as of Status, in a task's notice.
	Task json.RawMessage `json:"task,omitempty"`
	// Flow is the flow's final record, in a flow's notice.
	Flow json.RawMessage `json:"flow,omitempty"`
	// Attempts counts failed deliveries; NextAt is when the next is due.
	Attempts  int       `json:"attempts,omitempty"`
	NextAt    time.Time `json:"next_at"`
	LastError string    `json:"last_error,omitempty"`
	QueuedAt  time.Time `json:"queued_at"`
}

// noticeStatus is the status a write from old to task reports, if any:
// the task's interruption or its end.
func noticeStatus(old, task *stored.Task) string {
	switch {
	case task.Spec.OnFinish == nil || old == nil:
		return ""
	case task.Status.Terminal() && old.Status != task.Status:
		if task.Status == sdk.TaskCancelled {
			return sdk.NoticeAborted
		}
		return string(task.Status)
	case task.Interrupted != nil && old.Interrupted == nil:
		return sdk.NoticeInterrupted
	}
	return ""
}

// queueNotice queues the finish notice of task when this write from old
// interrupts or ends it and its spec asks for notices. b is the task's
// record as saved.
func (t *txn) queueNotice(old, task *stored.Task, b []byte) error {
	status := noticeStatus(old, task)
	if status == "" {
		return nil
	}
	n := Notice{TaskID: task.ID, To: task.Spec.OnFinish, Task: fitRecord(b, task.ID, task.Status, "tasks show")}
	return t.putNotice(task.ID+"/"+status, status, n)
}

// queueFlowNotice queues the notices of flow f when this write from old
// changes its status, carrying its record: those its notify policy asks
// for (queuePolicyNotices), and when the write ends it, with its
// terminal status (sdk.NoticeAborted for a cancel), the flow's own
// finish notice when it asks for one (sdk.Flow.OnFinish) and its
// controller's when the controller's configuration asks for one
// (SetControllerNotices) and the policy is not silent.
func (t *txn) queueFlowNotice(old, f *sdk.Flow) error {
	if old == nil || old.Status == f.Status {
		return nil
	}
	event := policyEvent(f)
	var ctl *sdk.FinishNotify
	if f.Status.Terminal() && f.NotifyPolicy != sdk.NotifySilent {
		var err error
		if ctl, err = t.controllerNotice(f.ControllerID); err != nil {
			return err
		}
	}
	own := f.Status.Terminal() && f.OnFinish != nil
	if event == "" && ctl == nil && !own {
		return nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode the notice of flow %s: %w", f.ID, err)
	}
	rec := fitRecord(b, f.ID, f.Status, "tasks flow show")
	if err := t.queuePolicyNotices(old, f, event, rec); err != nil {
		return err
	}
	status := noticeStatusOf(f)
	if own {
		if err := t.putNotice(f.ID+"/"+status, status, Notice{FlowID: f.ID, To: f.OnFinish, Flow: rec}); err != nil {
			return err
		}
	}
	if ctl == nil {
		return nil
	}
	return t.putNotice(f.ID+"/"+status+"/controller", status, Notice{FlowID: f.ID, Controller: f.ControllerID, To: ctl, Flow: rec})
}

// putNotice queues n as the notice key ("<run>/<status>", with a suffix
// for a second receiver of the same run) at status. A notice already
// queued under key is kept: one per (run, status, receiver).
func (t *txn) putNotice(key, status string, n Notice) error {
	if _, err := t.tx.Get(noticePrefix + key); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrKeyNotFound) {
		return err
	}
	n.Key, n.Status, n.NextAt, n.QueuedAt = key, status, t.now, t.now
	t.notify(NoticeQueued, n.TaskID)
	return t.put(noticePrefix+key, n)
}

// fitRecord is record b of run id to carry in a notice, or a stub naming
// the command that reads it when b is too large for the notice's value.
func fitRecord[S ~string](b []byte, id string, status S, show string) json.RawMessage {
	if len(b) <= store.MaxValueSize-16<<10 {
		return b
	}
	stub, _ := json.Marshal(map[string]any{"id": id, "status": status, "note": "the record is too large to carry; read it with " + show})
	return stub
}

// DueNotices returns the queued notices whose NextAt is not after now,
// the oldest queued first (a task's interruption before its end), at
// most limit of them (0: all). It reads every queued notice and keeps
// only the limit oldest due ones in memory.
func (e *Engine) DueNotices(now time.Time, limit int) ([]Notice, error) {
	var out []Notice
	err := e.view(func(tx store.ReadTx) error {
		out = nil
		var bad error
		err := tx.Scan(noticePrefix, store.ScanOptions{}, func(it store.Item) bool {
			var n Notice
			if err := json.Unmarshal(it.Value, &n); err != nil {
				bad = fmt.Errorf("read notice %s: %w", it.Key, err)
				return false
			}
			if !n.NextAt.After(now) {
				out = keepOldest(out, n, limit)
			}
			return true
		})
		return errors.Join(err, bad)
	})
	return out, err
}

// keepOldest inserts n into out, which is in delivery order, after the
// notices it does not precede, and drops the newest past limit (0: none).
func keepOldest(out []Notice, n Notice, limit int) []Notice {
	i, _ := slices.BinarySearchFunc(out, n, func(a, b Notice) int {
		if c := noticeOrder(a, b); c != 0 {
			return c
		}
		return -1 // after every equal one: scan order breaks ties
	})
	if limit > 0 && i >= limit {
		return out
	}
	out = slices.Insert(out, i, n)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// noticeOrder is the delivery order: the oldest queued first, and of
// notices queued at the same instant an interruption before an end.
func noticeOrder(a, b Notice) int {
	if c := a.QueuedAt.Compare(b.QueuedAt); c != 0 {
		return c
	}
	return cmp.Compare(noticeRank(a), noticeRank(b))
}

// NoticeDelivered removes a delivered notice. A notice already removed is
// not an error.
func (e *Engine) NoticeDelivered(key string) error {
	return e.write(func(t *txn) error { return t.del(noticePrefix + key) })
}

// NoticeFailed records a failed delivery of notice key and when to try
// again. A notice already removed is not an error.
func (e *Engine) NoticeFailed(key, why string, next time.Time) error {
	return e.write(func(t *txn) error {
		n, err := t.queuedNotice(key)
		if n == nil || err != nil {
			return err
		}
		n.Attempts++
		n.LastError, n.NextAt = clipReason(why), next
		return t.put(noticePrefix+key, n)
	})
}

// queuedNotice is the notice queued under key, or nil when none is (it
// was delivered or given up already).
func (t *txn) queuedNotice(key string) (*Notice, error) {
	it, err := t.tx.Get(noticePrefix + key)
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var n Notice
	if err := json.Unmarshal(it.Value, &n); err != nil {
		return nil, fmt.Errorf("read notice %s: %w", key, err)
	}
	return &n, nil
}

// clipReason is why a delivery failed, as a notice keeps it: at most
// 1 KiB of valid UTF-8.
func clipReason(why string) string { return strings.ToValidUTF8(why[:min(len(why), 1024)], "") }

// noticeRank orders notices queued at the same instant: an interruption
// before an end.
func noticeRank(n Notice) int {
	if n.Status == sdk.NoticeInterrupted {
		return 0
	}
	return 1
}

// InterruptTask records that flowgate gave up waiting for attempt n of
// running task id (see sdk.Interruption), and queues its interrupted
// notice. A task already interrupted is returned unchanged; one that is
// not running that attempt is refused as a stale report.
func (e *Engine) InterruptTask(id string, n int, in sdk.Interruption) (*stored.Task, error) {
	return e.changeTask(id, func(t *txn, task *stored.Task) error {
		if err := runningAttempt(task, n); err != nil || task.Interrupted != nil {
			return err
		}
		in.At = t.now
		task.Interrupted = &in
		return nil
	})
}
