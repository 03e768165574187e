package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api"
)

// jobErr makes validation errors usage errors (exit 2).
func jobErr(err error) error {
	var fe *api.FlagError
	if errors.As(err, &fe) {
		return usageError{err}
	}
	return err
}

// checkPipeline loads the workflow file at path and returns its absolute
// path; a missing or invalid file is a usage error naming --pipeline.
func checkPipeline(path string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return path, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", usageError{fmt.Errorf("--pipeline: %w", err)}
	}
	if _, err := flows.Load(abs); err != nil {
		return "", usageError{fmt.Errorf("--pipeline: %w", err)}
	}
	return abs, nil
}

func newCronCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cron",
		Short: "Add, list, show, edit, enable, disable, remove, run and backfill scheduled jobs",
		Long: `Scheduled jobs run a workflow file or a command line on a schedule: a cron
expression (5 or 6 fields, or @daily and the like) read in an IANA zone,
an interval (--every), or once (--at). Jobs live in the store of the home,
and a running gateway fires them when they come due. --announce-to posts
each run's result (a pipeline's output, a command's last stdout lines) to
a chat, mail, http(s) or cmd: destination (see docs/notifications.md).

A cron schedule that fires at minute 0 (@hourly, @daily, 0 9 * * *,
*/15 * * * *) runs up to 5 minutes after the written time, by a fixed
offset picked from the job id (the same on every gateway and after every
restart), because jobs written for :00 otherwise all hit the same APIs
and files in the same second. --exact keeps the written times; --stagger D
spreads any cron schedule over D. Next runs, catch-up and backfill all use
the staggered times, so a backfilled run is the run the job would have
made. cron show and cron list show the offset.

These commands go through the running gateway when there is one, else
they open the store themselves. cron run and cron backfill start work:
with no gateway running, they host one for their own duration.`,
	}
	cmd.AddCommand(newCronAddCmd(e), newCronListCmd(e), newCronShowCmd(e), newCronEditCmd(e),
		newCronEnableCmd(e, true), newCronEnableCmd(e, false), newCronRmCmd(e), newCronRunsCmd(e), newCronStatusCmd(e),
		newCronRunCmd(e), newCronBackfillCmd(e))
	return cmd
}

// cronFlags are the job flags of cron add and cron edit.
type cronFlags struct {
	in   api.CronJobInput
	json bool
}

func addCronFlags(cmd *cobra.Command, f *cronFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.in.Name, "name", "", "job name, unique")
	fl.StringVar(&f.in.Description, "description", "", "what the job is for")
	fl.StringVar(&f.in.Schedule.Cron, "cron", "", "cron expression: 5 fields (minute hour day-of-month month day-of-week), 6 (seconds first) or @daily, @every 1h …")
	fl.StringVar(&f.in.Schedule.TZ, "tz", "", "IANA zone for --cron (and an --at without offset); default UTC")
	fl.StringVar(&f.in.Schedule.Every, "every", "", "run every interval, such as 15m or 1h30m")
	fl.StringVar(&f.in.Schedule.At, "at", "", "run once: RFC 3339, '2026-03-08 09:00' in --tz, or +20m from now")
	fl.StringVar(&f.in.Schedule.DST, "dst", "", "for --cron, a time skipped by daylight saving: shift (run at the end of the gap, default) or skip")
	fl.StringVar(&f.in.Schedule.Stagger, "stagger", "", "for --cron, delay every run by a fixed offset within this window, picked from the job id (default 5m when the schedule fires at minute 0; 0 is none)")
	fl.BoolVar(&f.in.Schedule.Exact, "exact", false, "for --cron, run at the times as written: no default stagger for a schedule that fires at minute 0")
	fl.StringVar(&f.in.Pipeline, "pipeline", "", "workflow file to run")
	fl.StringVar(&f.in.ArgsJSON, "args-json", "", "workflow args as a JSON object, for --pipeline")
	fl.StringVar(&f.in.GateTimeout, "gate-timeout", "", "for --pipeline, deny a gate nobody answers within this duration (reason gate-expired), such as 30m")
	fl.StringVar(&f.in.Command, "command", "", "command line to run")
	fl.StringVar(&f.in.Session, "session", "", "isolated (default) or session:NAME")
	fl.StringVar(&f.in.Overlap, "overlap", "", "when a run is due while one is active: skip (default), buffer_one, buffer_all, cancel_other, allow_all")
	fl.StringVar(&f.in.CatchUpWindow, "catchup-window", "", "after downtime, run every missed time within this window (default: only the latest)")
	fl.StringVar(&f.in.Webhook, "webhook", "", "deliver results by POST to this http(s) URL")
	fl.StringVar(&f.in.NotifyCommand, "notify-command", "", "deliver results to this command line")
	fl.IntVar(&f.in.FailureAlertAfter, "failure-alert-after", 0, "alert after this many consecutive failures (0: no alerts)")
	fl.StringVar(&f.in.FailureAlertCooldown, "failure-alert-cooldown", "", "least time between two failure alerts (default 1h)")
	fl.StringVar(&f.in.FailureAlertWebhook, "failure-alert-webhook", "", "send failure alerts by POST to this http(s) URL (default: the job's delivery)")
	fl.StringVar(&f.in.FailureAlertCommand, "failure-alert-command", "", "send failure alerts to this command line (default: the job's delivery)")
	fl.StringArrayVar(&f.in.AnnounceTo, "announce-to", nil, "post each run's result to this destination (repeatable): a name from the gateway config's notify: map, slack://…, https://… or cmd:COMMAND")
	fl.StringArrayVar(&f.in.FailureAlertTo, "failure-alert-to", nil, "send failure alerts to this destination (repeatable), as --announce-to")
	fl.StringVar(&f.in.Notify, "notify", "", "notify policy of the flows the job's runs make: done_only, state_changes or silent")
	fl.StringArrayVar(&f.in.NotifyTo, "notify-to", nil, "destination of those flows' notices (repeatable), as --announce-to")
	fl.BoolVar(&f.in.DeleteAfterRun, "delete-after-run", false, "remove a one-shot --at job after it runs")
	fl.BoolVar(&f.in.Disabled, "disabled", false, "store the job disabled")
	fl.BoolVar(&f.json, "json", false, "print the job as JSON")
}

func newCronAddCmd(e *env) *cobra.Command {
	var f cronFlags
	cmd := &cobra.Command{
		Use:   "add --name N (--cron EXPR [--tz ZONE] | --every DUR | --at TIME) (--pipeline FILE [--args-json J] | --command CMD) [flags]",
		Short: "Add a scheduled job",
		Args:  args(0, "no arguments (give everything as flags)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			pipe, err := checkPipeline(f.in.Pipeline)
			if err != nil {
				return err
			}
			in := f.in
			in.Pipeline = pipe
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				if err := e.useHomeBook(c); err != nil {
					return err
				}
				j, err := c.AddJob(ctx, in)
				if err != nil {
					return jobErr(err)
				}
				fmt.Fprint(e.stderr, gateWarning(j))
				return printer{e.stdout, f.json}.emit(shownJob(j), func(w io.Writer) {
					fmt.Fprintf(w, "Added cron job %s (%s): %s; next run %s.\n", j.ID, clean(j.Name), scheduleText(j), nextText(j))
				})
			})
		},
	}
	addCronFlags(cmd, &f)
	return cmd
}

// cronList is the JSON shape of `cron list`.
type cronList struct {
	Count int       `json:"count"`
	Jobs  []cronJob `json:"jobs"`
}

func newCronListCmd(e *env) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List enabled jobs by next run (--all: disabled too)",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				jobs, err := c.ListJobs(ctx, all)
				if err != nil {
					return err
				}
				out := cronList{Count: len(jobs), Jobs: []cronJob{}}
				for _, j := range jobs {
					out.Jobs = append(out.Jobs, withStagger(shownJob(j)))
				}
				return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) { writeCronList(w, out, all) })
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "include disabled jobs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func writeCronList(w io.Writer, l cronList, all bool) {
	fmt.Fprintf(w, "Cron jobs: %d\n", l.Count)
	if l.Count == 0 {
		if all {
			fmt.Fprintln(w, "No cron jobs found.")
		} else {
			fmt.Fprintln(w, "No enabled cron jobs found; --all lists disabled ones too.")
		}
		return
	}
	var t table
	t.add("ID", "Name", "Schedule", "TZ", "Next run", "Last status", "Enabled", "Announce to")
	for _, j := range l.Jobs {
		t.add(j.ID, clip(j.Name, 32), clip(scheduleText(j.CronJob)+staggerNote(j.Stagger), 48), tzText(j.CronJob), nextText(j.CronJob), orNA(clean(j.State.LastStatus)), strconv.FormatBool(j.Enabled),
			clip(cmp.Or(strings.Join(j.Announce, ","), "-"), 40))
	}
	t.write(w)
}

// scheduleText says when a job runs, in the terms of its flag.
func scheduleText(j api.CronJob) string {
	s := j.Schedule
	switch s.Kind {
	case api.ScheduleEvery:
		return "every " + time.Duration(s.Every).String()
	case api.ScheduleAt:
		return "at " + stamp(s.At)
	}
	return clean(s.Expr)
}

func tzText(j api.CronJob) string {
	switch {
	case j.Schedule.Kind != api.ScheduleCron:
		return "-"
	case j.Schedule.TZ == "":
		return "UTC"
	}
	return clean(j.Schedule.TZ)
}

func nextText(j api.CronJob) string {
	switch {
	case !j.Enabled:
		return "disabled"
	case j.State.NextRun.IsZero():
		return "never"
	}
	return stamp(j.State.NextRun)
}

func newCronShowCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <id|name>",
		Short: "Show one job",
		Args:  args(1, "one job id or name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				j, err := c.GetJob(ctx, a[0])
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(withStagger(shownJob(j)), func(w io.Writer) { writeJob(w, j) })
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the job as JSON")
	return cmd
}

func writeJob(w io.Writer, j api.CronJob) {
	fmt.Fprintln(w, "Cron job:")
	var tb table
	row := func(k, v string) { tb.add("  "+k+":", v) }
	row("id", j.ID)
	row("name", clean(j.Name))
	row("description", orNA(clean(j.Description)))
	row("enabled", strconv.FormatBool(j.Enabled))
	row("schedule", scheduleText(j))
	row("tz", tzText(j))
	if j.Schedule.Kind == api.ScheduleCron {
		dst := string(j.Schedule.DST)
		if dst == "" {
			dst = string(api.DSTShift)
		}
		row("dst", dst)
		row("stagger", staggerText(withStagger(j).Stagger))
	}
	switch j.Payload.Kind {
	case api.PayloadPipeline:
		row("pipeline", clean(j.Payload.Pipeline))
		row("args", orNA(clean(string(j.Payload.Args))))
		if j.Payload.GateTimeout > 0 {
			row("gateTimeout", time.Duration(j.Payload.GateTimeout).String())
		}
	case api.PayloadCommand:
		row("command", clean(j.Payload.Command))
	}
	row("session", clean(j.Session))
	row("overlap", string(j.Overlap))
	if j.CatchUpWindow > 0 {
		row("catchupWindow", time.Duration(j.CatchUpWindow).String())
	} else {
		row("catchupWindow", "none (after downtime, only the latest missed time runs)")
	}
	row("delivery", deliveryText(j.Delivery))
	row("announceTo", destsText(j.Announce))
	if j.FailureAlert.After > 0 {
		row("failureAlert", fmt.Sprintf("after %d consecutive failures, at most every %s, to %s", j.FailureAlert.After,
			time.Duration(j.FailureAlert.Cooldown), deliveriesText(j.FailureAlert.Destinations(j))))
	} else {
		row("failureAlert", "none")
	}
	row("notify", notifyText(j))
	row("deleteAfterRun", strconv.FormatBool(j.DeleteAfterRun))
	row("nextRun", nextText(j))
	row("lastRun", stamp(j.State.LastRun))
	row("lastStatus", orNA(clean(j.State.LastStatus)))
	row("lastError", orNA(clean(j.State.LastError)))
	row("consecutiveErrors", strconv.Itoa(j.State.ConsecutiveErrors))
	row("lastAlertAt", stamp(j.State.LastAlertAt))
	row("createdAt", stamp(j.CreatedAt))
	row("updatedAt", stamp(j.UpdatedAt))
	if t := j.LastToggle; t != nil {
		row("lastToggle", toggleText(t.Enabled, t.By, t.At))
	} else {
		row("lastToggle", "none since it was added")
	}
	tb.write(w)
}

// deliveryText describes where a delivery goes.
func deliveryText(d api.CronDelivery) string {
	switch d.Kind {
	case api.DeliveryWebhook:
		return "webhook " + clean(d.URL)
	case api.DeliveryCommand:
		return "command " + clean(d.Command)
	case api.DeliveryDest:
		return shownDest(d.Dest)
	}
	return "none"
}

func newCronEditCmd(e *env) *cobra.Command {
	var f cronFlags
	cmd := &cobra.Command{
		Use:   "edit <id|name> [flags]",
		Short: "Change a job; its next run is recomputed at once",
		Long: `Change the flags given and keep the rest. A new --pipeline replaces a
--command and the other way round; likewise --webhook and --notify-command,
and an empty one turns delivery off. --announce-to, --failure-alert-to
and --notify-to replace the whole list; --announce-to '' clears it. The
schedule changes only with a schedule flag; --tz, --dst, --stagger or
--exact alone re-reads a cron schedule, and a new --cron keeps them
unless given again.`,
		Args: args(1, "one job id or name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			p, err := cronPatch(cmd, f.in)
			if err != nil {
				return err
			}
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				if err := e.useHomeBook(c); err != nil {
					return err
				}
				j, err := c.EditJob(ctx, a[0], p)
				if err != nil {
					return jobErr(err)
				}
				return printer{e.stdout, f.json}.emit(shownJob(j), func(w io.Writer) {
					fmt.Fprintf(w, "Updated cron job %s (%s): %s; next run %s.\n", j.ID, clean(j.Name), scheduleText(j), nextText(j))
				})
			})
		},
	}
	addCronFlags(cmd, &f)
	return cmd
}

// cronPatch builds a JobPatch from the flags given on the command line.
func cronPatch(cmd *cobra.Command, in api.CronJobInput) (api.CronJobPatch, error) {
	var p api.CronJobPatch
	changed := cmd.Flags().Changed
	str := func(name string, v string) *string {
		if !changed(name) {
			return nil
		}
		return &v
	}
	if changed("pipeline") {
		abs, err := checkPipeline(in.Pipeline)
		if err != nil {
			return p, err
		}
		in.Pipeline = abs
	}
	p.Name, p.Description = str("name", in.Name), str("description", in.Description)
	p.Cron, p.TZ, p.DST = str("cron", in.Schedule.Cron), str("tz", in.Schedule.TZ), str("dst", in.Schedule.DST)
	p.Every, p.At, p.Stagger = str("every", in.Schedule.Every), str("at", in.Schedule.At), str("stagger", in.Schedule.Stagger)
	if changed("exact") {
		p.Exact = &in.Schedule.Exact
	}
	p.Pipeline, p.ArgsJSON, p.Command = str("pipeline", in.Pipeline), str("args-json", in.ArgsJSON), str("command", in.Command)
	p.GateTimeout = str("gate-timeout", in.GateTimeout)
	p.Session, p.Overlap = str("session", in.Session), str("overlap", in.Overlap)
	p.CatchUpWindow = str("catchup-window", in.CatchUpWindow)
	p.Webhook, p.NotifyCommand = str("webhook", in.Webhook), str("notify-command", in.NotifyCommand)
	p.FailureAlertCooldown = str("failure-alert-cooldown", in.FailureAlertCooldown)
	p.FailureAlertWebhook = str("failure-alert-webhook", in.FailureAlertWebhook)
	p.FailureAlertCommand = str("failure-alert-command", in.FailureAlertCommand)
	list := func(name string, v []string) *[]string {
		if !changed(name) {
			return nil
		}
		return &v
	}
	p.AnnounceTo, p.FailureAlertTo, p.NotifyTo = list("announce-to", in.AnnounceTo), list("failure-alert-to", in.FailureAlertTo), list("notify-to", in.NotifyTo)
	p.Notify = str("notify", in.Notify)
	if changed("failure-alert-after") {
		p.FailureAlertAfter = &in.FailureAlertAfter
	}
	if changed("delete-after-run") {
		p.DeleteAfterRun = &in.DeleteAfterRun
	}
	if changed("disabled") {
		p.Disabled = &in.Disabled
	}
	return p, nil
}

func newCronEnableCmd(e *env, enable bool) *cobra.Command {
	verb, done := "disable", "Disabled"
	short := "Disable a job; it keeps its settings and state"
	if enable {
		verb, done = "enable", "Enabled"
		short = "Enable a job; its next run is computed from now"
	}
	var (
		asJSON bool
		by     string
	)
	cmd := &cobra.Command{
		Use:   verb + " <id|name> [--by NAME] [--json]",
		Short: short,
		Long: short + `.

The job keeps who last enabled or disabled it, and when (--by, else the
OS user); cron show prints it as lastToggle. A job already ` + verb + `d
is left as it is.`,
		Args: args(1, "one job id or name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				j, err := c.SetJobEnabled(ctx, a[0], enable, newDecision(by).By)
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(shownJob(j), func(w io.Writer) {
					fmt.Fprintf(w, "%s cron job %s (%s); next run %s.\n", done, j.ID, clean(j.Name), nextText(j))
				})
			})
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "who "+verb+"s the job, for its record (default: the OS user)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the job as JSON")
	return cmd
}

func newCronRmCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rm <id|name>",
		Short: "Remove a job",
		Args:  args(1, "one job id or name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				j, err := c.RemoveJob(ctx, a[0])
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(shownJob(j), func(w io.Writer) {
					fmt.Fprintf(w, "Removed cron job %s (%s).\n", j.ID, clean(j.Name))
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the removed job as JSON")
	return cmd
}
