package engine

import (
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// Advance applies u to managed flow id, if its revision is still
// expected, and creates tasks in it, all in one transaction: a
// controller's step costs one commit, and a crash keeps both or neither.
// u is applied as UpdateFlow applies a patch without a status
// (flowrule.Update); when it sets no field the flow is not written and
// keeps its revision. Each task is created as CreateTask creates it, with
// FlowID id: an idempotency key that names a task already there returns
// that task (created false). Any refusal (a stale revision as a
// *sdk.RevisionConflictError, a flow that accepts no tasks, a bad spec)
// changes nothing.
//
// ack, when not 0, is the sequence number of the event of flow id that
// the controller is handling, and says this Advance is the last write
// it makes for it (sdk.AdvanceRequest.AckSeq): the event is removed from
// the outbox in the same transaction, so it costs no commit of its own
// and is gone only with what the controller did for it. Only the head of
// the flow's outbox, the event in delivery, is removed, and not when it
// is parked; another number (an event already acknowledged) is ignored.
// A removed event is announced as an EventAcked change.
func (e *Engine) Advance(id string, expected int64, u sdk.FlowUpdate, tasks []CreateTaskInput, ack int64) (sdk.AdvanceResult, error) {
	if err := checkExpected(expected); err != nil {
		return sdk.AdvanceResult{}, err
	}
	if err := checkJSON("state", u.State); err != nil {
		return sdk.AdvanceResult{}, err
	}
	if err := checkJSON("wait", u.Wait); err != nil {
		return sdk.AdvanceResult{}, err
	}
	if len(tasks) == 0 {
		return sdk.AdvanceResult{}, invalid("advance of flow %s creates no task; use UpdateFlow to change the flow alone", id)
	}
	for i := range tasks {
		if tasks[i].FlowID != id {
			return sdk.AdvanceResult{}, invalid("advance of flow %s: task %d names flow %q; an advance creates tasks in its own flow", id, i, tasks[i].FlowID)
		}
		if err := tasks[i].normalize(); err != nil {
			return sdk.AdvanceResult{}, err
		}
	}
	var out sdk.AdvanceResult
	err := e.write(func(t *txn) error {
		out = sdk.AdvanceResult{Tasks: make([]*sdk.Task, len(tasks)), Created: make([]bool, len(tasks))}
		old, err := expectFlow(t, id, expected)
		if err != nil {
			return err
		}
		f := old
		if flowrule.Changes(u) {
			f = cloneFlow(old)
			flowrule.Update(f, u)
			if err := t.saveFlow(old, f); err != nil {
				return err
			}
		}
		out.Flow = f
		for i, in := range tasks {
			var task *stored.Task
			if task, out.Created[i], err = e.createTask(t, in); err != nil {
				return err
			}
			out.Tasks[i] = task.Public()
		}
		return t.ackHandled(id, ack)
	})
	if err != nil {
		return sdk.AdvanceResult{}, err
	}
	return out, nil
}
