package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/sdk"
)

// The cron commands that start work: cron run and cron backfill.

func newCronRunCmd(e *env) *cobra.Command {
	var (
		wait, asJSON bool
		by           string
	)
	cmd := &cobra.Command{
		Use:   "run <id|name> [--wait] [--by NAME] [--json]",
		Short: "Run a job now, outside its schedule",
		Long: `Start a run of the job at once, whether or not it is due; its schedule
does not move, and cron runs lists the run with trigger manual. The run
obeys the job's overlap policy: while a run of the job is active, skip
drops the new run (exit 1), buffer_one and buffer_all queue it, and
allow_all starts it alongside. A disabled job is refused.

Prints the run id (cron:<job>:<time>), its status and its task or flow,
and returns. With --wait it follows the run until it ends and exits 0 if
it ended ok, 1 otherwise; Ctrl-C stops following and leaves the run going.
When the gateway dies meanwhile, it follows the run on through the next
gateway (hosting one if none starts).

With no gateway running, this command hosts one for its own duration.

Example:
  flowgate cron run nightly --wait`,
		Args: args(1, "one job id or name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			dir, err := e.home()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			l, err := e.openLink(ctx, cmd, dir)
			if err != nil {
				return err
			}
			defer l.close()
			c := l.c
			r, err := c.RunJobNow(ctx, a[0], newDecision(by).By)
			if err != nil {
				return jobErr(err)
			}
			p := printer{e.stdout, asJSON}
			switch {
			case r.Status == api.RunSkipped:
				if err := p.emit(r, func(w io.Writer) { writeRunStarted(w, r) }); err != nil {
					return err
				}
				return exitStatus{code: exitFailure, msg: fmt.Sprintf("run %s was skipped: %s; wait until the active run ends (see flowgate cron status), or let runs overlap with flowgate cron edit %s --overlap allow_all (or buffer_one to queue them)",
					runID(r), orNA(clean(r.Error)), r.JobID)}
			case !wait:
				if hosted(c) {
					if err := waitRunStarted(ctx, c, dir, r); err != nil {
						return err
					}
				}
				if err := p.emit(r, func(w io.Writer) { writeRunStarted(w, r) }); err != nil {
					return err
				}
				return runEnded(r)
			}
			if !asJSON {
				writeRunStarted(e.stdout, r)
			}
			r, followed, err := followRun(ctx, l, r)
			if err != nil {
				return err
			}
			if !followed {
				fmt.Fprintf(e.stderr, "Stopped following; run %s keeps going.\nSee it: flowgate cron runs %s\n", runID(r), r.JobID)
				return exitStatus{code: 130}
			}
			if err := p.emit(r, func(w io.Writer) {
				fmt.Fprintf(w, "Run %s ended %s.\n", runID(r), r.Status)
			}); err != nil {
				return err
			}
			return runEnded(r)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the run until it ends; exit 1 unless it ended ok")
	cmd.Flags().StringVar(&by, "by", "", "who asks for the run, for its record (default: the OS user)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run as JSON (with --wait, as it ended)")
	return cmd
}

// writeRunStarted says what became of a run just asked for.
func writeRunStarted(w io.Writer, r api.CronRun) {
	fmt.Fprintf(w, "Run %s of job %s is %s", runID(r), r.JobID, r.Status)
	switch {
	case r.TaskID != "":
		fmt.Fprintf(w, ": task %s.\nFollow it: flowgate tasks logs %s -f\n", r.TaskID, r.TaskID)
	case r.FlowID != "":
		fmt.Fprintf(w, ": flow %s.\nFollow it: flowgate tasks flow show %s\n", r.FlowID, r.FlowID)
	case r.Status == api.RunBuffered:
		fmt.Fprintln(w, ": it starts when the job's active run ends.")
	case r.Error != "":
		fmt.Fprintf(w, ": %s\n", clean(r.Error))
	default:
		fmt.Fprintln(w, ".")
	}
}

// runEnded is nil unless r ended other than ok (or starting it failed).
func runEnded(r api.CronRun) error {
	if r.Open() || r.Status == api.RunOK {
		return nil
	}
	msg := fmt.Sprintf("run %s ended %s", runID(r), r.Status)
	if r.Error != "" {
		msg += ": " + clean(r.Error)
	}
	return exitStatus{code: exitFailure, msg: msg}
}

// runID names a run; records written before runs carried their id get it
// from their job and time.
func runID(r api.CronRun) string {
	if r.ID != "" {
		return r.ID
	}
	return api.CronRunID(r.JobID, r.Scheduled)
}

// hosted reports whether c is a gateway this command hosts, which stops
// when the command ends.
func hosted(c api.Client) bool {
	_, remote := c.(*api.Remote)
	return !remote
}

// followRun polls the job's history until run r has ended, and returns it
// as it ended with followed true; Ctrl-C (or ctx ending) stops following
// and returns followed false. When the gateway stops meanwhile, it follows
// on through the next one (see link).
func followRun(ctx context.Context, l *link, r api.CronRun) (api.CronRun, bool, error) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	for r.Open() {
		select {
		case <-ctx.Done():
			return r, false, nil
		case <-time.After(200 * time.Millisecond):
		}
		var cur api.CronRun
		err := l.retry(ctx, true, func(c api.Client) (err error) {
			cur, err = findRun(ctx, c, r)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return r, false, nil
			}
			return r, false, err
		}
		r = cur
	}
	return r, true, nil
}

// findRun reads run r afresh from its job's history: among the newest
// runs first, where a run just started is, else in the whole history.
func findRun(ctx context.Context, c api.Client, r api.CronRun) (api.CronRun, error) {
	const recent = 50
	for _, limit := range []int{recent, 0} {
		runs, err := c.JobRuns(ctx, r.JobID, limit)
		if err != nil {
			return r, err
		}
		for _, cur := range runs {
			if cur.Scheduled.Equal(r.Scheduled) {
				return cur, nil
			}
		}
		if len(runs) < recent {
			break
		}
	}
	return r, fmt.Errorf("run %s is no longer in the history of job %s; see flowgate cron runs %s", runID(r), r.JobID, r.JobID)
}

// waitRunStarted waits, bounded, until the work of run r has started, so
// that a gateway hosted by this command has launched it before it stops:
// its task no longer needs the gateway (runner.AwaitLaunched), or its
// flow has left queued.
func waitRunStarted(ctx context.Context, c api.Client, dir string, r api.CronRun) error {
	switch {
	case r.TaskID != "":
		t, err := c.ResolveTask(ctx, r.TaskID)
		if err != nil {
			return err
		}
		_, err = gateway.AwaitLaunched(ctx, dir, t, c.ResolveTask)
		return err
	case r.FlowID == "":
		return nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		v, err := c.ViewFlow(ctx, r.FlowID)
		if err != nil {
			return err
		}
		if v.Status != sdk.FlowQueued {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

func newCronBackfillCmd(e *env) *cobra.Command {
	var (
		from, to, overlap, by string
		dryRun, asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "backfill <id|name> --from TIME --to TIME [--dry-run] [--overlap POLICY] [--json]",
		Short: "Run the times a job's schedule named in a past range",
		Long: `Run each time the job's schedule names in (--from, --to], oldest first,
as the scheduler would have run it, with trigger backfill. A time already in
the job's history is left alone, so no time runs twice. --to must not be in
the future. TIME is RFC 3339 (2026-03-08T09:00:00Z) or "2026-03-08 09:00",
read as UTC.

The job's overlap policy applies unless --overlap replaces it for this
backfill: buffer_all runs the times one after another, allow_all side by
side; under skip (the default) the later times are skipped while the
first runs. --dry-run lists the times and runs nothing.

Prints one row per time: scheduled, status, run id, task or flow. With no
gateway running, this command hosts one for its own duration; runs left
buffered start while a gateway runs.

Example:
  flowgate cron backfill nightly --from '2026-03-01 00:00' --to '2026-03-08 00:00' --overlap buffer_all`,
		Args: args(1, "one job id or name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			o := api.BackfillOptions{DryRun: dryRun, By: newDecision(by).By}
			var err error
			if o.From, err = parseBackfillTime("--from", from); err != nil {
				return err
			}
			if o.To, err = parseBackfillTime("--to", to); err != nil {
				return err
			}
			if cmd.Flags().Changed("overlap") {
				if o.Overlap, err = api.ParseOverlap(overlap); err != nil {
					return jobErr(err)
				}
			}
			dir, err := e.home()
			if err != nil {
				return err
			}
			backfill := func(ctx context.Context, c api.Client) error {
				runs, err := c.BackfillJob(ctx, a[0], o)
				if err != nil {
					return jobErr(err)
				}
				if !dryRun && hosted(c) {
					for _, r := range runs {
						if r.Status == api.RunRunning {
							if err := waitRunStarted(ctx, c, dir, r); err != nil {
								return err
							}
						}
					}
				}
				out := cronRuns{Count: len(runs), DryRun: dryRun, Runs: runs}
				return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) { writeBackfill(w, out, a[0], hosted(c)) })
			}
			if dryRun {
				return e.withClient(cmd, backfill)
			}
			return e.withWorkClient(cmd, backfill)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "start of the range, not included: RFC 3339 or '2006-01-02 15:04' (UTC)")
	fl.StringVar(&to, "to", "", "end of the range, included, not in the future: RFC 3339 or '2006-01-02 15:04' (UTC)")
	fl.BoolVar(&dryRun, "dry-run", false, "list the times and what each would do; run nothing")
	fl.StringVar(&overlap, "overlap", "", "overlap policy for this backfill: skip, buffer_one, buffer_all, cancel_other, allow_all (default: the job's)")
	fl.StringVar(&by, "by", "", "who asks for the backfill, for each run's record (default: the OS user)")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// backfillLayout is the offset-less form --from and --to accept, in UTC.
const backfillLayout = "2006-01-02 15:04"

// parseBackfillTime reads the value of flag: RFC 3339, or backfillLayout
// in UTC. A missing or unreadable value is a usage error naming the flag.
func parseBackfillTime(flag, v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, usageError{fmt.Errorf("%s is required: give a time such as 2026-03-08T09:00:00Z or '2026-03-08 09:00' (UTC)", flag)}
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(backfillLayout, v, time.UTC); err == nil {
		return t, nil
	}
	return time.Time{}, usageError{fmt.Errorf("%s: %q is not a time; use RFC 3339 (2026-03-08T09:00:00Z) or '2026-03-08 09:00' (UTC)", flag, v)}
}

// writeBackfill prints a backfill, one row per scheduled time.
func writeBackfill(w io.Writer, out cronRuns, ref string, hosted bool) {
	if out.DryRun {
		fmt.Fprintf(w, "Backfill dry run: %d scheduled times; nothing ran.\n", out.Count)
	} else {
		fmt.Fprintf(w, "Backfill: %d scheduled times.\n", out.Count)
	}
	if out.Count == 0 {
		return
	}
	var t table
	t.add("Scheduled", "Status", "Run", "Task/Flow")
	buffered := 0
	for _, r := range out.Runs {
		if r.Status == api.RunBuffered {
			buffered++
		}
		t.add(stamp(r.Scheduled), r.Status, runID(r), orNA(runWork(r)))
	}
	t.write(w)
	switch {
	case out.DryRun:
	case buffered > 0 && hosted:
		fmt.Fprintf(w, "%d runs are buffered: they start one after another while a gateway runs (start one with flowgate gateway).\n", buffered)
	default:
		fmt.Fprintf(w, "Follow them: flowgate cron runs %s\n", clean(ref))
	}
}
