package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/runner"
)

// newGateway returns a gateway over home admitting maxRunning tasks at
// once, with no controller. See gateway.
func (r *run) newGateway(home string, maxRunning int) (*gateway.Gateway, error) {
	return r.gateway(home, maxRunning, nil)
}

// gateway returns a gateway over home admitting maxRunning tasks at once
// and running the first-party plugins builtins. Its shims and plugins are
// started as a gateway whose executable is cfg.Self starts them:
// "flowgate-shim DIR" when that binary is next to Self (else "Self shim
// DIR"), "Self plugin serve NAME".
func (r *run) gateway(home string, maxRunning int, builtins []string) (*gateway.Gateway, error) {
	var fc gateway.FileConfig
	fc.Limits.MaxRunning = maxRunning
	self, log := r.cfg.Self, r.cfg.Logger.Named("bench")
	return gateway.New(gateway.Config{
		Home: home, File: fc, Owner: "flowgate bench", Self: self, Builtins: builtins,
		Logger: log, Launch: runner.NewShims(self, log).Launch,
	})
}

// waitTasks polls c until no task is queued or running and want tasks
// exist, or ctx ends.
func waitTasks(ctx context.Context, c api.Client, want int, every time.Duration) error {
	for {
		s, err := c.Status(ctx)
		if err != nil {
			return err
		}
		total, active := 0, 0
		for st, n := range s.Tasks {
			total += n
			if !st.Terminal() {
				active += n
			}
		}
		if total >= want && active == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%d of %d tasks still active)", ctx.Err(), active, want)
		case <-time.After(every):
		}
	}
}
