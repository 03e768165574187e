package engine

import (
	"errors"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// FinishAndStart records the end of task id as FinishTask does and, in
// the same transaction, the start of queued task next as StartTask does
// with start: a runner whose task ended while another waits hands the
// slot over in one commit, not two one after the other. When next can
// no longer start (it was cancelled, started by another gateway, or is
// gone), it is left as it is and started is nil; the end is recorded all
// the same. A refused end changes nothing: the error is FinishTask's.
func (e *Engine) FinishAndStart(id string, in FinishInput, next string, start StartInput) (ended, started *stored.Task, err error) {
	if !in.Status.Terminal() {
		return nil, nil, invalid("a task finishes in a terminal status, not %q", in.Status)
	}
	err = e.write(func(t *txn) error {
		ended, started = nil, nil // a retried batch starts over
		var err error
		if ended, err = t.changeTask(id, finishTask(in)); err != nil {
			return err
		}
		started, err = t.startIfQueued(next, start)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return ended, started, nil
}

// startIfQueued starts task next in t as StartTask does, and returns nil
// and no error when the start is refused before anything is written: the
// task is gone, or is not queued any more. A failure after the task was
// written (its flow cannot follow it) is returned, so that the caller's
// transaction records nothing rather than a running task no runner runs.
func (t *txn) startIfQueued(next string, in StartInput) (*stored.Task, error) {
	loaded, refused := false, false
	task, err := t.changeTask(next, func(t *txn, task *stored.Task) error {
		loaded = true
		err := startTask(in)(t, task)
		refused = err != nil
		return err
	})
	if (!loaded || refused) && refusedStart(err) {
		return nil, nil
	}
	return task, err
}

// refusedStart reports whether err refuses a start: the task is not
// queued any more, or is gone.
func refusedStart(err error) bool {
	return errors.Is(err, sdk.ErrIllegalTransition) || errors.Is(err, sdk.ErrTerminal) || errors.Is(err, sdk.ErrNotFound)
}
