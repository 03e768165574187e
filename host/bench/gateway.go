package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

// newGateway returns a gateway over home admitting maxRunning tasks at
// once, with no controller. See gateway.
func (r *run) newGateway(home string, maxRunning int) (*gateway.Gateway, error) {
	return r.gateway(home, maxRunning, nil)
}

// gateway returns a gateway over home admitting maxRunning tasks at once
// and running the first-party controllers controllers in its own
// process, as a daemon does. Its shims are started as a gateway whose
// executable is cfg.Self starts them: "flowgate-shim DIR" when that
// binary is next to Self (else "Self shim DIR").
func (r *run) gateway(home string, maxRunning int, controllers map[string]func(getenv func(string) string) sdk.Controller) (*gateway.Gateway, error) {
	var fc gateway.FileConfig
	fc.Limits.MaxRunning = maxRunning
	self, log := r.cfg.Self, r.cfg.Logger.Named("bench")
	return gateway.New(gateway.Config{
		Home: home, File: fc, Owner: "flowgate bench", Self: self, Builtins: slices.Collect(maps.Keys(controllers)), Controllers: controllers,
		Logger: log, Shims: runner.NewShims(self, log),
	})
}

// waitTasks polls c every so often until no task is queued or running
// and want tasks exist, or ctx ends. A look costs the gateway it measures
// next to nothing: two one-task reads of the queued and running indexes,
// and a count of every task (Status, which also reads every active
// flow) only once those find none.
func waitTasks(ctx context.Context, c api.Client, want int, every time.Duration) error {
	for {
		done, err := tasksDone(ctx, c, want)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (tasks of the round still queued or running)", ctx.Err())
		case <-time.After(every):
		}
	}
}

// tasksDone reports whether no task of c is queued or running and at
// least want tasks exist.
func tasksDone(ctx context.Context, c api.Client, want int) (bool, error) {
	for _, s := range []sdk.TaskStatus{sdk.TaskQueued, sdk.TaskRunning} {
		page, err := c.ListTasks(ctx, apitype.TaskFilter{Status: s, Limit: 1})
		if err != nil || len(page.Tasks) > 0 {
			return false, err
		}
	}
	st, err := c.Status(ctx)
	if err != nil {
		return false, err
	}
	total, active := 0, 0
	for s, n := range st.Tasks {
		total += n
		if !s.Terminal() {
			active += n
		}
	}
	return total >= want && active == 0, nil
}
