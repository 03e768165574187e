package runner

import (
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
)

// Attempt states, as AttemptState reports them.
const (
	// AttemptEnded: the attempt's shim wrote how the task ended; a runner
	// settles it when it next looks.
	AttemptEnded = "ended"
	// AttemptAlive: the attempt's shim runs (checked by pid and start
	// time, never by pid alone).
	AttemptAlive = "alive"
	// AttemptUnclaimed: no shim claimed the attempt; a runner queues it
	// again.
	AttemptUnclaimed = "unclaimed"
	// AttemptGone: the shim claimed the attempt and is gone without
	// saying how the task ended, or the machine restarted since a shim
	// may have claimed it (claimMayBeLost). After a grace, the task is
	// lost.
	AttemptGone = "gone"
)

// claimLostWhy is why an attempt whose claim may have been lost with
// its machine's boot is lost.
const claimLostWhy = "the machine restarted since its start, and its shim's claim need not have reached the disk"

// claimMayBeLost reports whether the current attempt of running task t
// may have run although its record shows no claim: its start recorded
// the boot its shim would claim it in without a sync, and the machine
// has restarted since, losing what the page cache held. Such an attempt
// is never queued again as one that did not run. An attempt started
// without a boot was claimed with a sync, as by gateways before the
// boot was recorded.
func claimMayBeLost(t *stored.Task) bool { return t.Boot != "" && t.Boot != shim.BootID() }

// AttemptState says what the files under home show of running task t's
// current attempt: AttemptEnded, AttemptAlive, AttemptUnclaimed or
// AttemptGone. It writes nothing, so audits and maintenance previews can
// call it.
func AttemptState(home string, t *stored.Task) string {
	dir := LogDir(home, t.ID, t.Attempts)
	if rec, err := shim.ReadRecord(dir); err == nil {
		switch {
		case rec.Status != nil:
			return AttemptEnded
		case rec.Shim != nil && shim.Alive(*rec.Shim):
			return AttemptAlive
		}
	}
	if claimed, err := shim.Claimed(dir); err == nil && !claimed && !claimMayBeLost(t) {
		return AttemptUnclaimed
	}
	// A status written while we looked counts as ended, not gone.
	if rec, err := shim.ReadRecord(dir); err == nil && rec.Status != nil {
		return AttemptEnded
	}
	return AttemptGone
}

// MarkLost settles running task t, whose current attempt is AttemptGone,
// as the runner settles a shim that died: lost, or queued again when its
// retry policy marks it safe_to_repeat and attempts remain. A child the
// shim left behind is killed first. A task that moved on meanwhile (ended,
// or on another attempt) is left alone.
func MarkLost(eng *engine.Engine, home string, t *stored.Task, why string) error {
	r, err := New(eng, Config{Home: home})
	if err != nil {
		return err
	}
	r.lose(newAttempt(t.ID, t.Attempts, LogDir(home, t.ID, t.Attempts), nil), why)
	return nil
}

// RequeueUnclaimed queues running task t again, whose current attempt
// is AttemptUnclaimed, as a runner starting up does: it withdraws the
// attempt first, so a shim that comes later does not start the command,
// and leaves the task alone when a shim claimed it meanwhile. A write of
// the start that the store applied but reported as failed (etcd's
// "may or may not have been applied") leaves such a task, which no
// runner launches.
func RequeueUnclaimed(eng *engine.Engine, home string, t *stored.Task, why string) error {
	withdrawn, err := shim.Withdraw(LogDir(home, t.ID, t.Attempts))
	if err != nil || !withdrawn {
		return err
	}
	r, err := New(eng, Config{Home: home})
	if err != nil {
		return err
	}
	return r.requeueUnstarted(t, why)
}
