package runner

import (
	"path/filepath"

	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// giveUp records, once, that flowgate gave up waiting for attempt a (see
// sdk.Interruption): when the shim wrote its give-up file (a no-progress
// budget ran out and the child was kept running), or, given st, how the
// attempt ended, when the shim stopped the child at its no-progress or
// max budget. It reports whether there is nothing more to record.
func (r *Runner) giveUp(a *attempt, st *shim.Status) bool {
	in := sdk.Interruption{ChildStillRunning: true}
	if g, err := shim.ReadGiveUp(filepath.Join(a.dir, shim.GiveUpFile)); err == nil {
		in.Reason = g.Reason
	} else if st != nil && (st.Reason == shim.ReasonNoProgress || st.Reason == shim.ReasonBudgetExceeded) {
		in.Reason, in.ChildStillRunning = st.Reason, false
	} else {
		return st != nil
	}
	if t, err := r.eng.GetTask(a.taskID); err == nil && t.Interrupted != nil {
		return true
	}
	if _, err := r.eng.InterruptTask(a.taskID, a.n, in); r.hold.Observe(err) != nil {
		r.storeLog.Warn("record the give-up", "task", a.taskID, "error", err)
		return false
	}
	r.log.Info("gave up waiting for the task", "task", a.taskID, "reason", in.Reason, "child_still_running", in.ChildStillRunning)
	return true
}
