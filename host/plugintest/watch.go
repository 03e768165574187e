package plugintest

import (
	"context"
	"fmt"
	"syscall"

	"github.com/flowgate/flowgate/host/pluginhost"
)

// watchRestart kills the process of a plugin that declares Watch and
// checks that the new process is watched again and that its Watch holds:
// after a flow is driven to its end through the new process, the plugin
// has not been restarted again and its Watch is still running or ended
// OK. A plugin that declares no Watch passes with nothing to check.
func (h *harness) watchRestart(ctx context.Context) Result {
	const name = "watch-restart"
	if !h.watches {
		return Result{Case: name, Pass: true, Detail: "the plugin declares no Watch (GetInfo watch false): nothing to check"}
	}
	f, err := h.newFlow("watch restart")
	if err != nil {
		return Result{Case: name, Detail: err.Error()}
	}
	old := h.status()
	if old.State != pluginhost.StateRunning || old.PID <= 1 {
		return h.outcome(name, f, restarting(old), "")
	}
	if err := syscall.Kill(old.PID, syscall.SIGKILL); err != nil {
		return h.outcome(name, f, fmt.Errorf("kill the plugin process %d: %w; %w", old.PID, err, restarting(h.status())), "")
	}
	h.rec.note(f.ID, "(the harness killed the plugin process %d, whose watch was %q)", old.PID, old.Watch)
	if err := h.awaitRestart(ctx, old.Restarts); err != nil {
		return h.outcome(name, f, err, "")
	}
	now := h.status()
	h.rec.note(f.ID, "(the supervisor restarted the plugin: process %d, its Watch called again)", now.PID)
	end, err := h.drive(ctx, f.ID)
	if err == nil {
		err = h.endedAlike(end)
	}
	after := h.status()
	switch {
	case err != nil:
	case after.Restarts != now.Restarts:
		err = fmt.Errorf("while its new process drove a flow, %w", restarting(after))
	case after.Watch != "running" && after.Watch != "ended":
		err = fmt.Errorf("the new process's watch is %q, not running or ended", after.Watch)
	}
	return h.outcome(name, f, err, fmt.Sprintf("the plugin's Watch was called again in its new process %d and was still %s after a flow was driven through it", now.PID, after.Watch))
}

// restarting says that the plugin does not stay up, and what a Watch must
// do about it.
func restarting(st pluginhost.Status) error {
	return fmt.Errorf("the plugin is %s after %d restarts, last error: %s (a Watch that returns an error restarts the plugin; return only when ctx ends, or nil when there is nothing more to watch)", st.State, st.Restarts, st.LastError)
}
