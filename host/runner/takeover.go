package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// DefaultSweep is how often a runner of an installation of several
// gateways looks for running tasks of gateways that left, when
// Config.Sweep is zero.
const DefaultSweep = 10 * time.Second

// takeOverRetry is how soon a takeover that could not settle every task
// it found (the store failed a read or a write) is tried again, rather
// than at the next sweep: a dead gateway's tasks are settled within its
// lease TTL and a few seconds even then.
const takeOverRetry = time.Second

// takeOverLoop takes over the tasks of gateways that leave the
// installation while this runner runs: at each departure it hears of
// (Config.Departures), every Config.Sweep, the backstop for a departure
// the watch missed, and takeOverRetry after a pass that left some.
func (r *Runner) takeOverLoop(ctx context.Context) {
	departures := r.cfg.Departures(ctx)
	tick := time.NewTicker(r.cfg.Sweep)
	defer tick.Stop()
	var again <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-departures:
			if !ok {
				return
			}
		case <-tick.C:
		case <-again:
		}
		again = nil
		if !r.takeOver() {
			again = time.After(takeOverRetry)
		}
	}
}

// takeOver settles the running tasks whose gateway is no longer a member
// of the installation (Config.Cluster): each is marked lost, naming that
// gateway and this one, or queued again when its retry policy says it is
// safe to repeat. Tasks this runner follows are its own, whatever gateway
// their record names. Every gateway still running does this when one
// leaves; each settle is a write guarded by the attempt and the gateway
// it read, so a task is settled by one of them and the others are
// refused. It reports whether it settled every such task it found.
func (r *Runner) takeOver() bool {
	page, err := r.eng.ListTasks(engine.TaskFilter{Status: sdk.TaskRunning})
	if err != nil {
		r.storeLog.Error("list running tasks to take over those of gateways that left", "error", err)
		return false
	}
	done := true
	gone := map[string]bool{}
	for _, task := range page.Tasks {
		if task.Gateway == "" || task.Gateway == r.cfg.Member || r.following(task.ID) {
			continue
		}
		left, seen := gone[task.Gateway]
		if !seen {
			_, member := r.cfg.Cluster(task.Gateway)
			left, gone[task.Gateway] = !member, !member
		}
		if left {
			r.log.Info("taking over a task of a gateway that left", "task", task.ID, "gateway", task.Gateway)
			why := fmt.Sprintf("gateway %s, which ran it, left the installation (taken over by gateway %s)", task.Gateway, r.cfg.Member)
			done = r.settleLost(task, why) == nil && done
		}
	}
	return done
}

// following says whether this runner follows a running attempt of task id.
func (r *Runner) following(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.active[id] != nil
}

// settledElsewhere says whether err refused a write because the task had
// moved on since it was read: another gateway (or this one, by another
// path) settled or took it over first, which is no failure.
func settledElsewhere(err error) bool {
	return errors.Is(err, sdk.ErrIllegalTransition) || errors.Is(err, sdk.ErrTerminal)
}

// adopt takes over for this gateway a running task that an earlier run
// of it on this home (another member id) started, before this runner
// follows it again: the gateways that see that member's lease end then
// leave the task alone. It says whether the task is still this runner's
// to follow: not when another gateway settled it first.
func (r *Runner) adopt(task *stored.Task) bool {
	if r.cfg.Member == "" || task.Gateway == r.cfg.Member {
		return true
	}
	_, err := r.eng.AdoptTask(task.ID, task.Attempts, task.Gateway, r.cfg.Member)
	switch {
	case settledElsewhere(err):
		r.log.Info("not reattaching to a task another gateway settled", "task", task.ID, "error", err)
		return false
	case err != nil:
		// It runs here all the same; a gateway that sees the earlier
		// member leave may mark it lost meanwhile.
		r.storeLog.Error("take over a task of an earlier run of this gateway", "task", task.ID, "error", err)
	}
	return true
}

// elsewhere says whether task's files are in another home, so that this
// runner leaves it to its gateway: one on another machine (Config.Cluster),
// or a gone gateway of this machine whose attempt has no files in this
// home (another home's gateway, not an earlier run of this one). Such a
// task whose gateway is no longer a member is settled as lost (or queued
// again when safe), naming that gateway.
func (r *Runner) elsewhere(task *stored.Task) bool {
	if task.Gateway == "" || r.cfg.Cluster == nil || task.Gateway == r.cfg.Member {
		return false
	}
	here, member := r.cfg.Cluster(task.Gateway)
	why := fmt.Sprintf("gateway %s, which ran it on another machine, left the installation", task.Gateway)
	if here {
		if member {
			return false
		}
		if _, err := os.Stat(r.attemptDir(task.ID, task.Attempts)); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
		why = fmt.Sprintf("gateway %s, which ran it, left the installation, and this gateway's home has no files of its attempt", task.Gateway)
	}
	if !member && !r.preview {
		r.settleLost(task, why)
	}
	return true
}
