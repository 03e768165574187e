package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

func newFlowRetryCmd(e *env) *cobra.Command {
	var (
		expected int64
		by       string
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "retry <flow-id|owner-key> [--expected-revision N]",
		Short: "Run a failed, cancelled, lost or blocked single run again under the same flow",
		Long: `Run the single run of a flow (the one-task flow every detached tasks run gets)
again, as a new attempt of the same flow: the flow keeps its id and history,
goes back to queued with a retry entry naming who asked (--by, or the OS
user) and the attempt, and gets a new task with the same command. The
earlier tasks keep their status, and their logs stay readable with
flowgate tasks logs. A gateway runs the new task (this one, or the next).

The retry is guarded by the flow's revision: --expected-revision, or the
revision read when the command starts. Of two retries at the same revision
one runs; the other exits 3 and says what the flow is now.

A managed flow (a pipeline's, a controller's) is carried on with flowgate
tasks flow continue instead; a queued, running or succeeded flow has nothing
to retry. A run that held --secret-env or --inherit-env values cannot be
retried: the gateway never stored them. See docs/recovery.md.`,
		Args: args(1, "one flow id or owner key"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if cmd.Flags().Changed("expected-revision") && expected <= 0 {
				return usageError{fmt.Errorf("--expected-revision %d: a flow's revision starts at 1; pass the revision shown by flowgate tasks flow show %s", expected, a[0])}
			}
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				v, err := c.ViewFlow(ctx, a[0])
				if err != nil {
					return err
				}
				rev := expected
				if rev == 0 {
					rev = v.Revision
				}
				res, err := c.RetryFlow(ctx, v.ID, rev, newDecision(by).By)
				if err != nil {
					return retryConflict(err)
				}
				return printer{e.stdout, asJSON}.emit(res, func(w io.Writer) { writeRetry(w, res) })
			})
		},
	}
	cmd.Flags().Int64Var(&expected, "expected-revision", 0, "the flow's revision you read (default: the revision read when the command starts)")
	cmd.Flags().StringVar(&by, "by", "", "who retries, for the flow's history (default: the OS user)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {flow, task, attempt} as JSON")
	return cmd
}

// retryConflict adds to a revision conflict what the flow is now, so
// whoever lost the race sees what changed it; other errors pass as they
// are.
func retryConflict(err error) error {
	rc, ok := errors.AsType[*sdk.RevisionConflictError](err)
	if !ok || rc.Current == nil {
		return err
	}
	f := rc.Current
	return fmt.Errorf("%w: flow %s changed since revision %d and is now %s at revision %d (flowgate tasks flow history %s says how); retry again only if it still needs it",
		sdk.ErrRevisionConflict, f.ID, rc.Expected, f.Status, f.Revision, f.ID)
}

// writeRetry says which attempt the retry started, and how to follow it.
func writeRetry(w io.Writer, res apitype.RetryResult) {
	f, t := res.Flow, res.Task
	fmt.Fprintf(w, "Retried %s: attempt %d runs task %s (retrying %s); the flow is %s at revision %d.\n",
		f.ID, res.Attempt, t.ID, t.RetryOf, f.Status, f.Revision)
	fmt.Fprintf(w, "Follow it with flowgate tasks logs %s -f\n", t.ID)
}
