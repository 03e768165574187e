package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

type taskListOpts struct {
	status, runtime, after string
	limit                  int
	json                   bool
}

func newTasksCmd(e *env) *cobra.Command {
	var o taskListOpts
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List, show and cancel tasks; manage flows (tasks flow)",
		Long: `Tasks are the detached runs flowgate records. With no subcommand,
'flowgate tasks' lists them like 'flowgate tasks list'.`,
		Args: args(0, "no arguments (did you mean 'tasks show ID'?)"),
		RunE: func(cmd *cobra.Command, _ []string) error { return e.listTasks(cmd, o) },
	}
	addTaskListFlags(cmd, &o)
	list := &cobra.Command{
		Use:   "list",
		Short: "List tasks, newest first",
		Args:  args(0, "no arguments"),
		RunE:  func(cmd *cobra.Command, _ []string) error { return e.listTasks(cmd, o) },
	}
	addTaskListFlags(list, &o)

	var showJSON, showEnv bool
	show := &cobra.Command{
		Use:   "show <task-id|idempotency-key>",
		Short: "Show one task",
		Args:  args(1, "one task id or idempotency key"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				t, err := c.ResolveTask(ctx, a[0])
				if err != nil {
					return err
				}
				if !showEnv {
					t = redactEnv(t)
				}
				t = redactTaskDests(t)
				return printer{e.stdout, showJSON}.emit(t, func(w io.Writer) { writeTask(w, t) })
			})
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print the task record as JSON")
	show.Flags().BoolVar(&showEnv, "show-env", false, "print the values of the task's --env variables (redacted by default)")

	var cancelJSON bool
	cancel := &cobra.Command{
		Use:   "cancel <task-id>",
		Short: "Cancel a task",
		Long: `Cancel a task. A queued task is cancelled at once; a running task gets a
cancel request that its runner carries out by stopping the process.`,
		Args: args(1, "one task id"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				t, err := c.ResolveTask(ctx, a[0])
				if err != nil {
					return err
				}
				if t, err = c.CancelTask(ctx, t.ID); err != nil {
					return err
				}
				return printer{e.stdout, cancelJSON}.emit(t, func(w io.Writer) {
					if t.Status == sdk.TaskCancelled {
						fmt.Fprintf(w, "Cancelled %s (%s).\n", t.ID, clean(t.Runtime))
						return
					}
					fmt.Fprintf(w, "Cancel requested for %s (%s); its runner stops the process and marks it cancelled.\n", t.ID, clean(t.Runtime))
				})
			})
		},
	}
	cancel.Flags().BoolVar(&cancelJSON, "json", false, "print the task record as JSON")

	cmd.AddCommand(list, show, cancel, newRunCmd(e), newLogsCmd(e), newFlowCmd(e), newAuditCmd(e), newMaintenanceCmd(e), newTasksSummaryCmd(e))
	return cmd
}

func addTaskListFlags(cmd *cobra.Command, o *taskListOpts) {
	cmd.Flags().StringVar(&o.status, "status", "", "only tasks in this status (queued, running, succeeded, failed, timed_out, cancelled, lost)")
	cmd.Flags().StringVar(&o.runtime, "runtime", "", "only tasks of this runtime (cli, pipeline, cron, agent, …)")
	cmd.Flags().IntVar(&o.limit, "limit", defaultListLimit, "show at most this many tasks, newest first (0: all); --after pages on")
	cmd.Flags().StringVar(&o.after, "after", "", "list tasks older than this task id (paging cursor)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
}

// taskList is the JSON shape of `tasks list`.
type taskList struct {
	Count   int             `json:"count"`
	Runtime *string         `json:"runtime"`
	Status  *string         `json:"status"`
	Tasks   []*apitype.Task `json:"tasks"`
	Next    string          `json:"next,omitempty"`
	// Damaged lists the records skipped because they cannot be read;
	// absent when none (text mode says so on stderr).
	Damaged []apitype.DamagedRecord `json:"damaged,omitempty"`
}

func (e *env) listTasks(cmd *cobra.Command, o taskListOpts) error {
	f := apitype.TaskFilter{Runtime: o.runtime, After: o.after, Limit: o.limit}
	if o.status != "" {
		s, err := sdk.ParseTaskStatus(o.status)
		if err != nil {
			return fmt.Errorf("--status: %w", err)
		}
		f.Status = s
	}
	if o.limit < 0 {
		return usageError{fmt.Errorf("--limit must not be negative (got %d)", o.limit)}
	}
	return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
		page, err := c.ListTasks(ctx, f)
		if err != nil {
			return err
		}
		out := taskList{Count: len(page.Tasks), Tasks: []*apitype.Task{}, Next: page.Next, Damaged: page.Damaged}
		for _, t := range page.Tasks {
			out.Tasks = append(out.Tasks, withoutEvidence(redactTaskDests(redactEnv(t))))
		}
		if o.runtime != "" {
			out.Runtime = &o.runtime
		}
		if o.status != "" {
			out.Status = &o.status
		}
		e.warnDamaged(o.json, out.Damaged)
		return printer{e.stdout, o.json}.emit(out, func(w io.Writer) { writeTaskList(w, out) })
	})
}

func writeTaskList(w io.Writer, l taskList) {
	sum := sdk.Summarize(apitype.Publics(l.Tasks))
	fmt.Fprintf(w, "Background tasks: %d\n", l.Count)
	fmt.Fprintf(w, "Task pressure: %d queued · %d running · %d issues\n", sum.ByStatus[sdk.TaskQueued], sum.ByStatus[sdk.TaskRunning], sum.Failures)
	if l.Runtime != nil {
		fmt.Fprintf(w, "Runtime filter: %s\n", clean(*l.Runtime))
	}
	if l.Status != nil {
		fmt.Fprintf(w, "Status filter: %s\n", *l.Status)
	}
	if l.Count == 0 {
		fmt.Fprintln(w, "No background tasks found.")
		return
	}
	var t table
	t.add("Task", "Kind", "Status", "Flow", "Attempts", "Summary")
	for _, task := range l.Tasks {
		t.add(task.ID, clip(task.Runtime, 12), string(task.Status), task.FlowID, strconv.Itoa(task.Attempts), clip(taskSummary(task), 80))
	}
	t.write(w)
	if l.Next != "" {
		fmt.Fprintf(w, "More tasks: --after %s\n", l.Next)
	}
}

// taskSummary is the one line that says what a task is doing or did.
func taskSummary(t *apitype.Task) string {
	if t.Result != nil && t.Result.Summary != "" {
		return t.Result.Summary
	}
	if t.Progress != nil && t.Progress.Message != "" {
		return t.Progress.Message
	}
	return t.Title()
}

// taskCommand is what a task runs, as a shell reads it: its shell line,
// or its argv with every word that needs it single-quoted. A task another
// runtime runs has neither, and its command is empty.
func taskCommand(s sdk.TaskSpec) string {
	if s.Shell != "" {
		return s.Shell
	}
	words := make([]string, len(s.Argv))
	for i, a := range s.Argv {
		words[i] = shellWord(a)
	}
	return strings.Join(words, " ")
}

// shellWord quotes a for a POSIX shell unless it is made only of
// characters a shell reads literally.
func shellWord(a string) string {
	plain := func(r rune) bool {
		return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./=:,+@%", r))
	}
	if a != "" && strings.IndexFunc(a, func(r rune) bool { return !plain(r) }) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

func writeTask(w io.Writer, t *apitype.Task) {
	fmt.Fprintln(w, "Background task:")
	var tb table
	row := func(k, v string) { tb.add("  "+k+":", v) }
	row("taskId", t.ID)
	row("kind", clean(t.Runtime))
	row("status", string(t.Status))
	row("flowId", t.FlowID)
	row("ownerKey", clean(t.OwnerKey))
	row("label", orNA(clean(t.Label)))
	row("task", orNA(clean(taskCommand(t.Spec))))
	row("idempotencyKey", orNA(clean(t.IdempotencyKey)))
	envRows(row, t)
	limitRows(row, t.Spec)
	row("attempts", strconv.Itoa(t.Attempts))
	if t.ExitCode != nil {
		code := strconv.Itoa(*t.ExitCode)
		if t.Signal != "" {
			code += " (killed by " + clean(t.Signal) + ")"
		}
		row("exitCode", code)
	}
	if t.PID != 0 {
		row("pid", strconv.Itoa(t.PID))
	}
	if p := progressLine(t.Progress); p != "" {
		row("progress", p)
	}
	if t.Reason != "" {
		row("reason", t.Reason)
	}
	if t.Result != nil && t.Result.Summary != "" {
		row("result", clean(t.Result.Summary))
	}
	recoveryRows(row, t)
	agentRows(row, t)
	sessionRows(row, t)
	if t.ProgressErrors > 0 {
		row("progressErrors", fmt.Sprintf("%d malformed progress lines skipped", t.ProgressErrors))
	}
	if !t.CancelRequestedAt.IsZero() {
		row("cancelRequestedAt", stamp(t.CancelRequestedAt))
	}
	row("createdAt", stamp(t.CreatedAt))
	row("startedAt", stamp(t.StartedAt))
	row("endedAt", stamp(t.EndedAt))
	row("cleanupAfter", stamp(t.CleanupAfter))
	if t.MilestonesDropped > 0 {
		row("milestonesDropped", fmt.Sprintf("%d milestones between the first and the latest were not kept", t.MilestonesDropped))
	}
	for _, m := range t.Milestones {
		row(fmt.Sprintf("milestone %d", m.Seq), clean(m.Name+" "+m.Message))
	}
	for _, err := range t.Errors {
		row("error", clean(err))
	}
	tb.write(w)
}
