package engine

import (
	"encoding/json"
	"fmt"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// guarded runs fn on a copy of managed flow id at the expected revision and
// saves the result. It refuses a missing flow (ErrNotFound), a flow that is
// not managed (ErrNotManaged) and a stale revision (a
// *sdk.RevisionConflictError with the current flow), changing nothing.
func (e *Engine) guarded(id string, expected int64, fn func(t *txn, f *sdk.Flow) error) (*sdk.Flow, error) {
	if err := checkExpected(expected); err != nil {
		return nil, err
	}
	var out *sdk.Flow
	err := e.write(func(t *txn) error {
		old, err := expectFlow(t, id, expected)
		if err != nil {
			return err
		}
		f := cloneFlow(old)
		if err := fn(t, f); err != nil {
			return err
		}
		if err := t.saveFlow(old, f); err != nil {
			return err
		}
		out = f
		return nil
	})
	return out, err
}

// expectFlow loads managed flow id in t and checks its revision is
// expected, with guarded's refusals.
func expectFlow(t *txn, id string, expected int64) (*sdk.Flow, error) {
	f, err := loadFlow(t.tx, id)
	if err != nil {
		return nil, err
	}
	if f.SyncMode != sdk.SyncManaged {
		return nil, fmt.Errorf("%w: flow %s is %s; its status follows its task, so change the task instead", sdk.ErrNotManaged, id, f.SyncMode)
	}
	if f.Revision != expected {
		return nil, &sdk.RevisionConflictError{Expected: expected, Current: f}
	}
	return f, nil
}

// move changes f's status to `to` with flowrule.Move, the state machine and
// bookkeeping sdktest shares, after releasing the outbox a blocked managed
// flow parked.
func (t *txn) move(f *sdk.Flow, to sdk.FlowStatus) error {
	if err := checkFlowMove(f, to); err != nil {
		return err
	}
	if f.Status == sdk.FlowBlocked && to != sdk.FlowBlocked && f.SyncMode == sdk.SyncManaged {
		if err := t.unparkHead(f.ID); err != nil {
			return err
		}
	}
	return flowrule.Move(f, to, t.now)
}

// FlowPatch is a generic guarded change to a managed flow. Nil fields are
// left as they are.
type FlowPatch struct {
	// Status, if set, moves the flow under the state machine. cancelled
	// and lost are refused here: use CancelFlow or RequestCancel.
	Status sdk.FlowStatus
	// State replaces the JSON state; JSON null stores null.
	State json.RawMessage
	// Wait replaces the JSON wait; JSON null stores null.
	Wait           json.RawMessage
	CurrentStep    *string
	BlockedTaskID  *string
	BlockedSummary *string
}

// UpdateFlow applies p to managed flow id if its revision is still
// expected. A move to queued or running goes through flowrule.Resume, as
// Resume does, so a waiting or blocked flow that the CLI or API sets
// running drops its wait and tells its controller. A stale revision fails
// with *sdk.RevisionConflictError and changes nothing.
func (e *Engine) UpdateFlow(id string, expected int64, p FlowPatch) (*sdk.Flow, error) {
	if err := checkJSON("state", p.State); err != nil {
		return nil, err
	}
	if err := checkJSON("wait", p.Wait); err != nil {
		return nil, err
	}
	if p.Status != "" {
		if _, err := sdk.ParseFlowStatus(string(p.Status)); err != nil {
			return nil, err
		}
		if p.Status == sdk.FlowCancelled || p.Status == sdk.FlowLost {
			return nil, invalid("a flow becomes %s only through cancel or maintenance; use flowgate tasks flow cancel", p.Status)
		}
	}
	return e.guarded(id, expected, func(t *txn, f *sdk.Flow) error {
		var resumed json.RawMessage
		switch p.Status {
		case "":
		case sdk.FlowQueued, sdk.FlowRunning:
			// A move to work is a resume, whoever asks for it: it records
			// what Resume records (the wait cleared, flow.resumed queued
			// for a parked flow). Fields the patch gives are applied after.
			var err error
			if resumed, err = flowrule.Resume(f, sdk.ResumeRequest{Status: p.Status}, t.move); err != nil {
				return err
			}
		default:
			if err := t.move(f, p.Status); err != nil {
				return err
			}
		}
		flowrule.Update(f, sdk.FlowUpdate{
			State: p.State, Wait: p.Wait, CurrentStep: p.CurrentStep, BlockedTaskID: p.BlockedTaskID, BlockedSummary: p.BlockedSummary,
		})
		if resumed == nil {
			return nil
		}
		return t.appendEvent(f, sdk.EventFlowResumed, "", resumed)
	})
}

// WaitInput is what SetWaiting records: the controller's request, applied
// by flowrule.Park.
type WaitInput = sdk.WaitRequest

// SetWaiting parks managed flow id: blocked when a blocking task or summary
// is given, else waiting.
func (e *Engine) SetWaiting(id string, expected int64, in WaitInput) (*sdk.Flow, error) {
	if err := checkJSON("state", in.State); err != nil {
		return nil, err
	}
	if err := checkJSON("wait", in.Wait); err != nil {
		return nil, err
	}
	return e.guarded(id, expected, func(t *txn, f *sdk.Flow) error {
		return flowrule.Park(f, in, t.move)
	})
}

// ResumeInput is what Resume records: the controller's request, applied by
// flowrule.Resume. Status is queued (the default) or running.
type ResumeInput = sdk.ResumeRequest

// Resume moves managed flow id to work: a queued flow starts running, a
// waiting or blocked one resumes. It clears the wait and blocked fields
// and, for a flow that was waiting or blocked, queues a flow.resumed
// event for its controller.
func (e *Engine) Resume(id string, expected int64, in ResumeInput) (*sdk.Flow, error) {
	if _, err := flowrule.ResumeStatus(in); err != nil {
		return nil, err
	}
	if err := checkJSON("state", in.State); err != nil {
		return nil, err
	}
	return e.guarded(id, expected, func(t *txn, f *sdk.Flow) error {
		data, err := flowrule.Resume(f, in, t.move)
		if err != nil || data == nil {
			return err // data is nil when a queued flow starts: nobody waited to be told
		}
		return t.appendEvent(f, sdk.EventFlowResumed, "", data)
	})
}

// EndInput is what Finish and Fail record: the controller's request,
// applied by flowrule.End. Fail keeps BlockedTaskID and BlockedSummary to
// say what the flow failed on; Finish ignores them.
type EndInput = sdk.EndRequest

// Finish moves managed flow id to succeeded.
func (e *Engine) Finish(id string, expected int64, in EndInput) (*sdk.Flow, error) {
	return e.end(id, expected, sdk.FlowSucceeded, in)
}

// Fail moves managed flow id to failed, keeping the blocked fields given.
func (e *Engine) Fail(id string, expected int64, in EndInput) (*sdk.Flow, error) {
	return e.end(id, expected, sdk.FlowFailed, in)
}

func (e *Engine) end(id string, expected int64, to sdk.FlowStatus, in EndInput) (*sdk.Flow, error) {
	if err := checkJSON("state", in.State); err != nil {
		return nil, err
	}
	if err := flowrule.CheckOutput(in.Output); err != nil {
		return nil, err
	}
	return e.guarded(id, expected, func(t *txn, f *sdk.Flow) error {
		return flowrule.End(f, to, in, t.move)
	})
}
