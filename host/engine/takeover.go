package engine

import (
	"fmt"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// AdoptTask records that gateway to now follows the running attempt of
// task id, which gateway from started: a gateway restarted on the same
// home reattaches to the tasks its previous run (another member id)
// left running, and takes them over so that the gateways that see the
// previous member's lease end leave them alone (see FinishInput.Gateway).
// It is refused with ErrIllegalTransition when the task is no longer
// running that attempt or another gateway took it over first.
func (e *Engine) AdoptTask(id string, attempt int, from, to string) (*stored.Task, error) {
	return e.changeTask(id, func(t *txn, task *stored.Task) error {
		if err := runningAttempt(task, attempt); err != nil {
			return err
		}
		if err := ranBy(task, from); err != nil {
			return err
		}
		task.Gateway = to
		return nil
	})
}

// ranBy refuses a change made on the understanding that gateway runs
// task's attempt, when the task's record names another gateway: one
// took the task over (AdoptTask) since the change's caller read it. An
// empty gateway checks nothing.
func ranBy(task *stored.Task, gateway string) error {
	if gateway == "" || task.Gateway == gateway {
		return nil
	}
	return fmt.Errorf("%w: task %s is run by gateway %s now, not %s", sdk.ErrIllegalTransition, task.ID, task.Gateway, gateway)
}
