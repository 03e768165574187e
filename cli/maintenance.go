package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/sdk"
)

func newMaintenanceCmd(e *env) *cobra.Command {
	var apply, asJSON bool
	cmd := &cobra.Command{
		Use:   "maintenance [--apply] [--json]",
		Short: "Settle, stamp, prune and repair the records (a preview unless --apply)",
		Long: `Run one full maintenance pass over the tasks and flows, between two audits.
Without --apply it only counts what it would do, and writes nothing.

Per task: a running task whose process is gone (its shim died without
recording how the task ended) is marked lost after a 5 minute grace, or
queued again when its retry policy marks it safe_to_repeat; a finished task
without cleanup_after gets one; a task whose flow is gone is pruned, with its
logs, once cleanup_after has passed.

Per flow: a managed flow whose cancel missed its end becomes cancelled; a
mirrored flow out of step with its task is re-derived from it; a finished
flow that ended more than the retention ago (7 days unless the gateway
config says otherwise) is pruned with its tasks, their logs and its events.
A flow that can still move (running, waiting at a gate, blocked) is never
pruned.

Then every damaged record (one that does not decode, or that flowgate could
not have written, such as a flow with status "done") is moved to the
quarantine, where 'flowgate check' lists it and backups keep it; the passes
above skip such records. Last, every index entry is checked against its
record and repaired.

A running gateway does a quick version of this every 60 seconds (see
maintenance: in the gateway config); this command runs the full pass there
when a gateway runs, else on the store directly.

Example:
  flowgate tasks maintenance            # what would change
  flowgate tasks maintenance --apply    # change it`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var (
				rep   api.MaintenanceReport
				local bool
			)
			with := e.withReader
			if apply {
				with = e.withClient
			}
			err := with(cmd, func(ctx context.Context, c api.Client) error {
				var err error
				rep, err = c.Maintain(ctx, apply)
				_, remote := c.(*api.Remote)
				local = !remote
				return err
			})
			if err != nil {
				return err
			}
			// With no gateway, this command held the store alone and has
			// closed it: the compaction a pass asked for can run now.
			var compacted string
			if local && rep.Maintenance.Compaction != nil && rep.Maintenance.Compaction.Requested {
				dir, err := e.home()
				if err != nil {
					return err
				}
				done, before, after, err := gateway.CompactIfRequested(dir, cmd.CommandPath())
				if err != nil {
					return fmt.Errorf("compact the store: %w", err)
				}
				if done {
					rep.Maintenance.Compaction.Requested = false
					compacted = fmt.Sprintf("Compacted the store file: %s → %s\n", mib(before), mib(after))
				}
			}
			if err := (printer{e.stdout, asJSON}).emit(rep, func(w io.Writer) {
				writeMaintenance(w, rep)
				fmt.Fprint(w, compacted)
			}); err != nil {
				return err
			}
			if n := len(rep.Maintenance.Errors); n > 0 {
				return exitStatus{code: exitFailure, msg: fmt.Sprintf("maintenance: %d record(s) could not be handled; see the errors above", n)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&apply, "apply", false, "write the changes (default: preview only)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// mib renders a byte count in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// writeMaintenance prints the reference's layout, then what flowgate adds.
func writeMaintenance(w io.Writer, rep api.MaintenanceReport) {
	m := rep.Maintenance
	mode := "preview"
	if rep.Mode == "apply" {
		mode = "applied"
	}
	fmt.Fprintf(w, "Tasks maintenance (%s): tasks %d reconcile · %d cleanup stamp · %d prune; task-flows %d reconcile · %d prune\n",
		mode, m.Tasks.Reconciled, m.Tasks.CleanupStamped, m.Tasks.Pruned, m.TaskFlows.Reconciled, m.TaskFlows.Pruned)
	health := func(label string, s api.AuditSummary) {
		fmt.Fprintf(w, "%s: %d queued · %d running · %d audit errors · %d audit warnings\n",
			label, rep.Tasks[sdk.TaskQueued], rep.Tasks[sdk.TaskRunning], s.Combined.Errors, s.Combined.Warnings)
	}
	if rep.Mode == "apply" {
		health("Tasks health after apply", rep.AuditAfter)
		health("Tasks health before apply", rep.AuditBefore)
	} else {
		health("Tasks health", rep.AuditBefore)
	}
	if m.Quarantined > 0 {
		verb := "to move to the quarantine"
		if rep.Mode == "apply" {
			verb = "moved to the quarantine; flowgate check lists them"
		}
		fmt.Fprintf(w, "Damaged records: %d (%s)\n", m.Quarantined, verb)
	}
	if m.Indexes > 0 {
		verb := "to repair"
		if rep.Mode == "apply" {
			verb = "repaired"
		}
		fmt.Fprintf(w, "Index entries out of step with their records: %d (%s)\n", m.Indexes, verb)
	}
	if n := m.Tasks.TimestampsRepaired + m.TaskFlows.TimestampsRepaired; n > 0 {
		verb := "to repair"
		if rep.Mode == "apply" {
			verb = "repaired; the flow's history says what moved"
		}
		fmt.Fprintf(w, "Inconsistent timestamps: %d tasks · %d task-flows (%s)\n", m.Tasks.TimestampsRepaired, m.TaskFlows.TimestampsRepaired, verb)
	}
	if c := m.Compaction; c != nil && c.Due {
		fmt.Fprintf(w, "Store file: %s, %.0f%% free pages", mib(c.FileBytes), 100*c.FreeShare())
		switch {
		case c.Requested:
			fmt.Fprintln(w, "; the gateway compacts it at its next start")
		case rep.Mode != "apply":
			fmt.Fprintln(w, "; --apply compacts it")
		default:
			fmt.Fprintln(w)
		}
	}
	if m.LogsRemoved > 0 {
		fmt.Fprintf(w, "Task log directories removed: %d\n", m.LogsRemoved)
	}
	if m.Skipped > 0 {
		fmt.Fprintf(w, "Skipped (changed while the pass ran): %d\n", m.Skipped)
	}
	for _, e := range m.Errors {
		fmt.Fprintf(w, "Error: %s\n", clean(e))
	}
	if rep.Mode != "apply" {
		fmt.Fprintln(w, "Dry run only. Re-run with `flowgate tasks maintenance --apply` to write changes.")
	}
}
