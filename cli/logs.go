package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

func newLogsCmd(e *env) *cobra.Command {
	var (
		follow, stderr bool
		attempt        int
	)
	cmd := &cobra.Command{
		Use:   "logs <task-id|idempotency-key>",
		Short: "Show a task's output; -f follows it until the task ends",
		Args:  args(1, "one task id or idempotency key"),
		RunE: func(cmd *cobra.Command, a []string) error {
			dir, err := e.home()
			if err != nil {
				return err
			}
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				t, err := c.ResolveTask(ctx, a[0])
				if err != nil {
					return err
				}
				n := attempt
				if n == 0 {
					n = t.Attempts
				}
				if n == 0 {
					fmt.Fprintf(e.stderr, "Task %s has not started yet (%s).\n", t.ID, t.Status)
					if !follow {
						return nil
					}
				}
				if attempt < 0 || attempt > t.Attempts {
					return usageError{fmt.Errorf("--attempt %d: task %s has attempts 1 to %d", attempt, t.ID, t.Attempts)}
				}
				name := "stdout"
				if stderr {
					name = "stderr"
				}
				w := e.stdout
				if n > 0 && !gateway.RanFromHome(dir, t.Gateway) {
					return logElsewhere(dir, t)
				}
				if !follow {
					copyFrom(w, filepath.Join(runner.LogDir(dir, t.ID, n), name), 0)
					return nil
				}
				ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
				var off int64
				for {
					if n > 0 {
						off += copyFrom(w, filepath.Join(runner.LogDir(dir, t.ID, n), name), off)
					}
					if t.Status.Terminal() {
						return nil
					}
					select {
					case <-ctx.Done():
						return nil
					case <-time.After(200 * time.Millisecond):
					}
					if t, err = c.ResolveTask(ctx, t.ID); err != nil {
						return err
					}
					if attempt == 0 && t.Attempts != n {
						if n > 0 {
							copyFrom(w, filepath.Join(runner.LogDir(dir, t.ID, n), name), off)
						}
						n, off = t.Attempts, 0
						if !gateway.RanFromHome(dir, t.Gateway) {
							return logElsewhere(dir, t)
						}
					}
				}
			})
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new output until the task ends")
	cmd.Flags().BoolVar(&stderr, "stderr", false, "show standard error instead of standard output")
	cmd.Flags().IntVar(&attempt, "attempt", 0, "show this attempt (default: the latest)")
	return cmd
}

// logElsewhere is the error for a log that is not in this home (dir):
// another gateway of the installation ran task, from its own home.
func logElsewhere(dir string, t *sdk.Task) error {
	return gateway.LogElsewhere(t.Gateway, fmt.Sprintf("it is not in this home (%s); run flowgate logs %s on that host, with the home that gateway ran from, or open that gateway's run center", dir, t.ID))
}
