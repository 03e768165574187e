package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
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
				copyLog, err := logCopier(e.stdout, c, dir, name, t)
				if err != nil || !follow {
					if err == nil && n > 0 {
						_, err = copyLog(ctx, n, 0)
					}
					return err
				}
				ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
				var off int64
				for {
					if n > 0 {
						copied, err := copyLog(ctx, n, off)
						if err != nil {
							return err
						}
						off += copied
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
							if _, err := copyLog(ctx, n, off); err != nil {
								return err
							}
						}
						n, off = t.Attempts, 0
						if copyLog, err = logCopier(e.stdout, c, dir, name, t); err != nil {
							return err
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

// logCopier returns how tasks logs copies stream name of attempt n of
// task t to w, from byte off on, returning how many bytes it copied: from
// the files in the home dir when one of its gateways ran t; else through
// the gateway c talks to (api.TaskLogs), which reads the log where it is;
// else it fails, saying where the log is.
func logCopier(w io.Writer, c api.Client, dir, name string, t *apitype.Task) (func(ctx context.Context, n int, off int64) (int64, error), error) {
	if gateway.RanFromHome(dir, t.Gateway) {
		return func(_ context.Context, n int, off int64) (int64, error) {
			return copyFrom(w, filepath.Join(gateway.TaskLogDir(dir, t.ID, n), name), off), nil
		}, nil
	}
	tl, ok := c.(api.TaskLogs)
	if !ok {
		return nil, gateway.LogElsewhere(t.Gateway, fmt.Sprintf("it is not in this home (%s); run flowgate tasks logs %s on that host, with the home that gateway ran from, through a gateway's socket, or in a run center", dir, t.ID))
	}
	return func(ctx context.Context, n int, off int64) (int64, error) {
		var copied int64
		for {
			chunk, err := tl.TaskLog(ctx, t.ID, api.LogQuery{Stream: name, Attempt: n, Offset: off + copied})
			if err != nil {
				return copied, err
			}
			if _, err := io.WriteString(w, chunk.Text); err != nil {
				return copied, err
			}
			copied += int64(len(chunk.Text))
			if chunk.Text == "" || off+copied >= chunk.Size {
				return copied, nil
			}
		}
	}, nil
}
