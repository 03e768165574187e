package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

func newFlowCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "flow",
		Short: "List, show, create, update and cancel flows",
		Long: `Flows are durable records of multi-step work. Managed flows are driven by
a controller; task_mirrored flows follow a single detached task.`,
	}
	cmd.AddCommand(newFlowListCmd(e), newFlowShowCmd(e), newFlowCancelCmd(e), newFlowCreateCmd(e), newFlowUpdateCmd(e), newFlowContinueCmd(e), newFlowRetryCmd(e), newFlowHistoryCmd(e))
	cmd.AddCommand(newGateCmds(e)...)
	return cmd
}

// flowList is the JSON shape of `tasks flow list`.
type flowList struct {
	Count  int                `json:"count"`
	Total  int                `json:"total"`
	Status *string            `json:"status"`
	Flows  []apitype.FlowView `json:"flows"`
	Next   string             `json:"next,omitempty"`
	// Damaged lists the records skipped because they cannot be read;
	// absent when none (text mode says so on stderr).
	Damaged []apitype.DamagedRecord `json:"damaged,omitempty"`
	counts  apitype.FlowCounts
}

func newFlowListCmd(e *env) *cobra.Command {
	var (
		status, owner, controller, mode, after string
		chain                                  string
		find                                   flowFind
		limit                                  int
		asJSON                                 bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List flows, newest first",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := apitype.FlowFilter{OwnerKey: owner, ControllerID: controller, ChainID: chain, After: after, Limit: limit}
			if status != "" {
				s, err := sdk.ParseFlowStatus(status)
				if err != nil {
					return fmt.Errorf("--status: %w", err)
				}
				f.Status = s
			}
			if mode != "" {
				m, err := sdk.ParseSyncMode(mode)
				if err != nil {
					return fmt.Errorf("--mode: %w", err)
				}
				f.SyncMode = m
			}
			if limit < 0 {
				return usageError{fmt.Errorf("--limit must not be negative (got %d)", limit)}
			}
			if err := find.filter(&f); err != nil {
				return err
			}
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				var err error
				if f.OwnerKey, err = api.FlowOwner(ctx, c, owner, find.cron, find.trigger); err != nil {
					return err
				}
				page, err := c.ViewFlows(ctx, f)
				if err != nil {
					return err
				}
				counts, err := c.CountFlows(ctx)
				if err != nil {
					return err
				}
				out := flowList{Count: len(page.Flows), Total: counts.Total, Flows: page.Flows, Next: page.Next, Damaged: page.Damaged, counts: counts}
				if out.Flows == nil {
					out.Flows = []apitype.FlowView{}
				}
				withoutFlowEvidence(out.Flows)
				for i := range out.Flows {
					out.Flows[i] = redactViewDests(out.Flows[i])
				}
				if status != "" {
					out.Status = &status
				}
				e.warnDamaged(asJSON, out.Damaged)
				return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) { writeFlowList(w, out) })
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&status, "status", "", "only flows in this status (queued, running, waiting, blocked, succeeded, failed, partial, cancelled, lost)")
	fl.StringVar(&owner, "owner", "", "only flows of this owner key")
	fl.StringVar(&controller, "controller", "", "only flows driven by this controller")
	fl.StringVar(&mode, "mode", "", "only flows of this sync mode (managed, task_mirrored)")
	fl.StringVar(&chain, "chain", "", "only the runs of this chain (a chain id is its first run's flow id)")
	fl.IntVar(&limit, "limit", defaultListLimit, "show at most this many flows, newest first (0: all); --after pages on")
	fl.StringVar(&after, "after", "", "list flows older than this flow id (paging cursor)")
	find.add(fl)
	fl.BoolVar(&asJSON, "json", false, "print JSON: each flow with its tasks and task summary")
	return cmd
}

func writeFlowList(w io.Writer, l flowList) {
	c := l.counts
	fmt.Fprintf(w, "TaskFlows: %d\n", l.Count)
	fmt.Fprintf(w, "TaskFlow pressure: %d active · %d blocked · %d cancel-requested · %d total\n",
		c.ByStatus[sdk.FlowQueued]+c.ByStatus[sdk.FlowRunning], c.ByStatus[sdk.FlowBlocked], c.CancelRequested, c.Total)
	if l.Status != nil {
		fmt.Fprintf(w, "Status filter: %s\n", *l.Status)
	}
	if l.Count == 0 {
		fmt.Fprintln(w, "No TaskFlows found.")
		return
	}
	var t table
	t.add("TaskFlow", "Mode", "Status", "Rev", "Controller", "Tasks", "Goal")
	for _, v := range l.Flows {
		t.add(v.ID, string(v.SyncMode), string(v.Status), strconv.FormatInt(v.Revision, 10), orNA(clip(v.ControllerID, 20)),
			fmt.Sprintf("%d active/%d total", v.TaskSummary.Active, v.TaskSummary.Total), clip(v.Goal, 80))
	}
	t.write(w)
	if l.Next != "" {
		fmt.Fprintf(w, "More flows: --after %s\n", l.Next)
	}
}

func newFlowShowCmd(e *env) *cobra.Command {
	var asJSON, watch bool
	cmd := &cobra.Command{
		Use:   "show <flow-id|owner-key|approval-id>",
		Short: "Show one flow and its tasks (an owner key shows that owner's newest flow, an approval id the flow at that gate)",
		Args:  args(1, "one flow id, owner key or approval id"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if watch {
				return e.watchFlow(cmd.Context(), a[0], asJSON)
			}
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				id, err := gateFlowID(ctx, c, a[0])
				if err != nil {
					return err
				}
				v, err := c.ViewFlow(ctx, id)
				if err != nil {
					return err
				}
				out := flowShow{FlowView: redactViewDests(v), Stages: pipelineStages(v)}
				return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) {
					writeFlow(w, v)
					writeStages(w, out.Stages)
					writeProduced(w, v, func(sum string) ([]byte, error) { return c.KeptValue(ctx, v.ID, sum) })
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the flow, its tasks, task summary and pipeline stages as JSON")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "redraw the flow live (tasks, progress bars, gate, latest history) until it ends")
	return cmd
}

func writeFlow(w io.Writer, v apitype.FlowView) {
	fmt.Fprintln(w, "TaskFlow:")
	var tb table
	row := func(k, val string) { tb.add("  "+k+":", val) }
	row("flowId", v.ID)
	row("mode", string(v.SyncMode))
	row("status", string(v.Status))
	row("revision", strconv.FormatInt(v.Revision, 10))
	row("goal", clean(v.Goal))
	row("currentStep", orNA(clean(v.CurrentStep)))
	row("owner", clean(v.OwnerKey))
	if v.ControllerID != "" {
		row("controller", clean(v.ControllerID))
	}
	createdRows(row, v)
	notifyRows(row, v.NotifyPolicy, v.NotifyTo, v.NotifyTemplate)
	chainRows(row, v)
	if s := stateLine(v.Flow); s != "" {
		row("state", s)
	}
	if v.Status.Terminal() && v.Status != sdk.FlowSucceeded {
		failed := failingTask(v)
		if r := endReason(v.Flow, failed); r != "" {
			row(endLabel(v.Status), r)
		}
		if failed != nil {
			row("failedTask", fmt.Sprintf("%s %s %s", failed.ID, failed.Status, clip(failed.Title(), 60)))
		}
	}
	if v.ControllerError != "" {
		row("controllerError", clean(v.ControllerError))
	}
	if v.CancelRequested() {
		row("cancelRequestedAt", stamp(v.CancelRequestedAt))
	}
	row("createdAt", stamp(v.CreatedAt))
	row("updatedAt", stamp(v.UpdatedAt))
	row("endedAt", stamp(v.EndedAt))
	s := v.TaskSummary
	row("tasks", fmt.Sprintf("%d total · %d active · %d issues", s.Total, s.Active, s.Failures))
	usageRows(row, v)
	tb.write(w)
	if len(v.Tasks) == 0 {
		fmt.Fprintln(w, "Linked tasks: none")
		return
	}
	fmt.Fprintln(w, "Linked tasks:")
	for _, t := range v.Tasks {
		fmt.Fprintf(w, "- %s %s %s\n", t.ID, t.Status, clip(t.Title(), 80))
		if p := progressLine(t.Progress); p != "" {
			fmt.Fprintf(w, "    progress: %s\n", p)
		}
		writeDiagnosisLine(w, t)
		for _, m := range t.Milestones {
			fmt.Fprintf(w, "    milestone %d: %s\n", m.Seq, clip(strings.TrimSpace(m.Name+" "+m.Message), 80))
		}
	}
}

func newFlowCancelCmd(e *env) *cobra.Command {
	var (
		asJSON bool
		by     string
	)
	cmd := &cobra.Command{
		Use:   "cancel <flow-id|owner-key>",
		Short: "Cancel a flow and its active tasks",
		Long: `Cancel a flow. The cancel request is recorded first and is sticky: the flow
accepts no new tasks, its queued tasks are cancelled at once, and its running
tasks are stopped by their runner. The flow becomes cancelled when its last
active task settles, or at once if it has none. The flow's history names who
asked: --by, or the OS user.`,
		Args: args(1, "one flow id or owner key"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				v, err := c.ViewFlow(ctx, a[0])
				if err != nil {
					return err
				}
				res, err := c.CancelFlow(ctx, v.ID, newDecision(by).By)
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(res, func(w io.Writer) {
					f := res.Flow
					if f.Status == sdk.FlowCancelled {
						fmt.Fprintf(w, "Cancelled %s (%s) with status %s.\n", f.ID, f.SyncMode, f.Status)
						return
					}
					fmt.Fprintf(w, "Cancel requested for %s (%s): %d active tasks are being stopped; the flow becomes cancelled when they settle.\n",
						f.ID, f.SyncMode, res.Active)
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the flow and its tasks as JSON")
	cmd.Flags().StringVar(&by, "by", "", "who cancels, for the flow's history (default: the OS user)")
	return cmd
}

func newFlowCreateCmd(e *env) *cobra.Command {
	var (
		in     apitype.CreateFlowInput
		state  string
		asJSON bool
		budget budgetFlags
		finish finishFlags
		notify notifyFlags
	)
	cmd := &cobra.Command{
		Use:   "create --controller C --goal G --owner O [--state JSON] [--on-finish CMD | --on-finish-webhook URL]",
		Short: "Create a managed flow",
		Long: `Create a managed flow, driven by the controller plugin --controller names.
With a gateway running, a controller it has no plugin for is refused (exit 2,
naming the plugins it runs), since nothing would drive the flow; pass
--allow-unknown-controller to create the flow for a plugin you add later.
With no gateway running, nothing is known and the flow is created.`,
		Args: args(0, "no arguments, only flags"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("state") {
				b, err := jsonFlag("--state", state)
				if err != nil {
					return err
				}
				in.State = b
			}
			b, err := budget.budget()
			if err != nil {
				return err
			}
			in.Budget, in.OnFinish = b, finish.notify()
			ns, err := notify.settings()
			if err != nil {
				return err
			}
			ns.flow(&in)
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				f, err := c.CreateFlow(ctx, in)
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(f, func(w io.Writer) {
					fmt.Fprintf(w, "Created flow %s (managed by %s) at revision %d.\n", f.ID, clean(f.ControllerID), f.Revision)
				})
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&in.ControllerID, "controller", "", "controller id that drives the flow (required)")
	fl.BoolVar(&in.AllowUnknownController, "allow-unknown-controller", false, "create the flow even though the running gateway has no plugin of that controller (you add it later)")
	fl.StringVar(&in.Goal, "goal", "", "what the flow is for (required)")
	fl.StringVar(&in.OwnerKey, "owner", "", "owner key (required)")
	fl.StringVar(&in.CurrentStep, "step", "", "initial current step")
	fl.StringVar(&state, "state", "", "initial state as JSON")
	notify.add(fl, "flow")
	fl.BoolVar(&asJSON, "json", false, "print the created flow as JSON")
	budget.add(fl)
	finish.add(fl, "when the flow ends, cancelled as aborted (at least once)")
	return cmd
}

func newFlowUpdateCmd(e *env) *cobra.Command {
	var (
		expected           int64
		status, state, wt  string
		step               string
		blockedTask, block string
		asJSON             bool
	)
	cmd := &cobra.Command{
		Use:   "update <flow-id> --expected-revision N [--state JSON] [--status S]",
		Short: "Change a managed flow if it is still at the revision you read",
		Long: `Change a managed flow, guarded by its revision: if the flow changed since
you read it (its revision is no longer N), nothing is written and the command
exits 3 showing the current revision.

--status queued or running on a waiting or blocked flow resumes it, as its
controller's Resume does: the wait is cleared and the controller is told
(flow.resumed).`,
		Args: args(1, "one flow id"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if !cmd.Flags().Changed("expected-revision") {
				return usageError{fmt.Errorf("--expected-revision is required: pass the revision shown by flowgate tasks flow show %s", a[0])}
			}
			var p apitype.FlowPatch
			if status != "" {
				s, err := sdk.ParseFlowStatus(status)
				if err != nil {
					return fmt.Errorf("--status: %w", err)
				}
				p.Status = s
			}
			var err error
			if cmd.Flags().Changed("state") {
				if p.State, err = jsonFlag("--state", state); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("wait") {
				if p.Wait, err = jsonFlag("--wait", wt); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("step") {
				p.CurrentStep = &step
			}
			if cmd.Flags().Changed("blocked-task") {
				p.BlockedTaskID = &blockedTask
			}
			if cmd.Flags().Changed("blocked-summary") {
				p.BlockedSummary = &block
			}
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				f, err := c.UpdateFlow(ctx, a[0], expected, p)
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(f, func(w io.Writer) {
					fmt.Fprintf(w, "Updated flow %s to revision %d (status %s).\n", f.ID, f.Revision, f.Status)
				})
			})
		},
	}
	fl := cmd.Flags()
	fl.Int64Var(&expected, "expected-revision", 0, "the revision you read (required)")
	fl.StringVar(&status, "status", "", "move the flow to this status (queued, running, waiting, blocked, succeeded, failed)")
	fl.StringVar(&state, "state", "", "replace the state with this JSON")
	fl.StringVar(&wt, "wait", "", "replace the wait with this JSON")
	fl.StringVar(&step, "step", "", "set the current step")
	fl.StringVar(&blockedTask, "blocked-task", "", "set the blocking task id")
	fl.StringVar(&block, "blocked-summary", "", "set the blocked summary")
	fl.BoolVar(&asJSON, "json", false, "print the updated flow as JSON")
	return cmd
}

// jsonFlag checks that a flag's value is one JSON value.
func jsonFlag(name, v string) (json.RawMessage, error) {
	if !json.Valid([]byte(v)) {
		var x any
		err := json.Unmarshal([]byte(v), &x)
		return nil, fmt.Errorf("%w: %s is not valid JSON (%v): %s", sdk.ErrInvalid, name, err, clip(v, 60))
	}
	return json.RawMessage(v), nil
}
