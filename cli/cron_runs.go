package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
)

// cronRuns is the JSON shape of `cron runs` and `cron backfill`.
type cronRuns struct {
	Count  int           `json:"count"`
	DryRun bool          `json:"dry_run,omitempty"`
	Runs   []api.CronRun `json:"runs"`
}

func newCronRunsCmd(e *env) *cobra.Command {
	var (
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "runs <id|name>",
		Short: "Show a job's run history, newest first",
		Args:  args(1, "one job id or name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if limit < 0 {
				return usageError{fmt.Errorf("--limit must not be negative (got %d)", limit)}
			}
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				runs, err := c.JobRuns(ctx, a[0], limit)
				if err != nil {
					return jobErr(err)
				}
				out := cronRuns{Count: len(runs), Runs: runs}
				return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) {
					fmt.Fprintf(w, "Runs: %d\n", out.Count)
					if out.Count == 0 {
						return
					}
					var t table
					t.add("Scheduled", "Status", "Trigger", "Started", "Ended", "Task/Flow", "Error")
					for _, r := range runs {
						t.add(stamp(r.Scheduled), r.Status, triggerText(r), stamp(r.StartedAt), stamp(r.EndedAt), orNA(runWork(r)), clip(runNote(r), 80))
					}
					t.write(w)
				})
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "show at most this many runs (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// runWork is the task or flow id of a run, or "".
func runWork(r api.CronRun) string {
	if r.TaskID != "" {
		return r.TaskID
	}
	return r.FlowID
}

// runNote is what the last column of cron runs says: where an open run's
// flow waits at a gate, else the run's error.
func runNote(r api.CronRun) string {
	if r.Waiting != nil {
		return r.Waiting.String()
	}
	return r.Error
}

// statusNote is the last column of cron status: why the job was
// disabled, else the gate its active run waits at.
func statusNote(j api.CronJobStatus) string {
	if j.DisabledReason == "" && j.Waiting != nil {
		return j.Waiting.String()
	}
	return j.DisabledReason
}

// triggerText says what asked for a run.
func triggerText(r api.CronRun) string {
	if r.Trigger == "" {
		return api.TriggerSchedule
	}
	return r.Trigger
}

// cronStatusOut is the JSON shape of `cron status`.
type cronStatusOut struct {
	Running bool                `json:"running"`
	Count   int                 `json:"count"`
	Jobs    []api.CronJobStatus `json:"jobs"`
}

func newCronStatusCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the scheduler's view: whether it runs, jobs due next, active and buffered runs, why a job was disabled",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				st, err := c.CronStatus(ctx)
				if err != nil {
					return err
				}
				out := cronStatusOut{Running: st.Running, Count: len(st.Jobs), Jobs: st.Jobs}
				return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) {
					if out.Running {
						fmt.Fprintln(w, "Scheduler: running in the gateway")
					} else {
						fmt.Fprintln(w, "Scheduler: stopped; no gateway runs, so no job fires (start one with flowgate gateway)")
					}
					fmt.Fprintf(w, "Cron jobs: %d\n", out.Count)
					if out.Count == 0 {
						return
					}
					var t table
					t.add("Name", "Enabled", "Next run", "Last scheduled", "Active", "Buffered", "Note")
					for _, j := range out.Jobs {
						t.add(clean(j.Job.Name), fmt.Sprint(j.Job.Enabled), nextText(j.Job), stamp(j.LastScheduled),
							fmt.Sprint(j.Active), fmt.Sprint(j.Buffered), clip(statusNote(j), 80))
					}
					t.write(w)
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
