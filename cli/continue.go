package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/sdk"
)

// continueFlags are the flags every continuing command takes.
type continueFlags struct {
	reason, review, assignments, by string
	asJSON                          bool
}

func (f *continueFlags) add(cmd *cobra.Command, defReason string) {
	fl := cmd.Flags()
	fl.StringVar(&f.reason, "reason", defReason, "why the flow is continued: what went wrong and what the continuation changes")
	fl.StringVar(&f.review, "review", "", "the review of the failure the continuation acts on")
	fl.StringVar(&f.assignments, "assignments", "", `a JSON file: an array of {"node", "instruction", "depends_on"}, one for every node that did not finish`)
	fl.StringVar(&f.by, "by", "", "who continues, for the source flow's history (default: the OS user)")
	fl.BoolVar(&f.asJSON, "json", false, "print {flow, created} as JSON")
}

// request builds the continue request at revision expected.
func (f *continueFlags) request(expected int64) (sdk.ContinueRequest, error) {
	req := sdk.ContinueRequest{ExpectedRevision: expected, Reason: f.reason, Review: f.review, By: newDecision(f.by).By}
	if strings.TrimSpace(f.reason) == "" {
		return req, usageError{fmt.Errorf("--reason is required: say what went wrong and what the continuation changes")}
	}
	if f.assignments == "" {
		return req, nil
	}
	b, err := os.ReadFile(f.assignments)
	if err != nil {
		return req, usageError{fmt.Errorf("--assignments: %w", err)}
	}
	if err := json.Unmarshal(b, &req.Assignments); err != nil || req.Assignments == nil {
		return req, usageError{fmt.Errorf(`--assignments %s: want a JSON array of {"node", "instruction", "depends_on"} (%v)`, f.assignments, err)}
	}
	return req, nil
}

// writeContinuation says what the continuation res is: new or the one
// an identical request had made, what it reuses and what it reruns.
func writeContinuation(w io.Writer, res api.ContinueResult) {
	f, r := res.Flow, res.Flow.Continuation
	verb := "accepted"
	if !res.Created {
		verb = "already accepted (identical request)"
	}
	fmt.Fprintf(w, "Continuation %s: flow %s continues %s at revision %d (chain %s).\n", verb, f.ID, r.SourceFlowID, r.SourceRevision, f.Chain())
	fmt.Fprintf(w, "Reused: %s\nRerun:  %s\n", orNA(strings.Join(r.Reuse, ", ")), orNA(strings.Join(r.Rerun, ", ")))
}

func newFlowContinueCmd(e *env) *cobra.Command {
	var (
		expected int64
		cf       continueFlags
	)
	cmd := &cobra.Command{
		Use:   "continue <flow-id> --expected-revision N --reason TEXT [--review TEXT] [--assignments FILE]",
		Short: "Continue a failed or partial flow once: rerun what failed, reuse what succeeded",
		Long: `Ask for the one continuation of a failed or partial managed flow: a new
flow in the same chain that reuses the work that succeeded and reruns only
the nodes that did not finish and the successful ones that depend on them.
The receipt (source, revision, reason, review, assignments) is stored before
any work starts; a gateway starts the continuation (this one, or the next).

A chain has at most two runs. The same request again prints the same
continuation (exit 0); a different one is refused (exit 2), as are a
cancelled source, one whose outcome is unknown, a billing-exhausted chain, an
exhausted budget and a changed controller or definition. A stale
--expected-revision exits 3. See docs/recovery.md.`,
		Args: args(1, "one flow id"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if !cmd.Flags().Changed("expected-revision") {
				return usageError{fmt.Errorf("--expected-revision is required: pass the revision shown by flowgate tasks flow show %s", a[0])}
			}
			req, err := cf.request(expected)
			if err != nil {
				return err
			}
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				v, err := c.ViewFlow(ctx, a[0])
				if err != nil {
					return err
				}
				req.Controller = api.RunningController(ctx, c, v.ControllerID)
				res, err := c.ContinueFlow(ctx, v.ID, req)
				if err != nil {
					return err
				}
				return printer{e.stdout, cf.asJSON}.emit(res, func(w io.Writer) { writeContinuation(w, res) })
			})
		},
	}
	cmd.Flags().Int64Var(&expected, "expected-revision", 0, "the source flow's revision you read (required)")
	cf.add(cmd, "")
	return cmd
}

func newPipelineContinueCmd(e *env) *cobra.Command {
	var (
		id, mode string
		cf       continueFlags
	)
	cmd := &cobra.Command{
		Use:   "continue --id <flow-id|approval-id> [--reason TEXT] [--review TEXT] [--assignments FILE]",
		Short: "Rerun a failed pipeline flow from its failed step, reusing the steps before it",
		Long: `Continue a failed pipeline flow (tasks flow continue, at the flow's current
revision) and follow the continuation: the steps that succeeded are reused
and never run again, the failed step reruns, and so do the steps after it
(a step that consumed a rerun step's output reruns with its former stdout in
FLOWGATE_PRIOR_OUTPUT). The workflow file must be unchanged. With no gateway
running, this command hosts one for its duration.`,
		Args: args(0, "flags only"),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if id == "" {
				return usageError{fmt.Errorf("--id is required: the failed pipeline flow (or an approval id of it)")}
			}
			return e.continuePipeline(cmd, id, mode, &cf, rerunFrom{})
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "the failed pipeline flow's id or approval id")
	cmd.Flags().StringVar(&mode, "mode", "", "tool: print Lobster's JSON envelope")
	cf.add(cmd, "rerun from the failed step (pipeline continue)")
	return cmd
}

// rerunFrom is pipeline run --from-step: the workflow file named and the
// step to rerun from.
type rerunFrom struct{ file, step string }

// continuePipeline continues pipeline flow ref (from a step, for pipeline
// run --from-step) and follows the continuation to its end or a gate.
func (e *env) continuePipeline(cmd *cobra.Command, ref, mode string, cf *continueFlags, from rerunFrom) (err error) {
	tool := mode == "tool"
	if mode != "" && !tool {
		return usageError{fmt.Errorf("--mode %q: the only mode is tool", mode)}
	}
	if tool {
		defer func() { err = e.refuseAsTool(err) }()
	}
	return e.withLink(cmd, func(ctx context.Context, l *link) error {
		c := l.c
		flowID, err := gateFlowID(ctx, c, ref)
		if err != nil {
			return err
		}
		v, err := c.ViewFlow(ctx, flowID)
		if errors.Is(err, sdk.ErrNotFound) {
			return fmt.Errorf("%w: %q is neither a flow id nor the approval id of an open gate; continue a failed pipeline with its flow id (an approval id works only while its gate is open): list flows with flowgate tasks flow list", sdk.ErrNotFound, ref)
		}
		if err != nil {
			return err
		}
		req, err := cf.request(v.Revision)
		if err != nil {
			return err
		}
		if err := from.check(v.Flow); err != nil {
			return err
		}
		req.FromStep = from.step
		req.Controller = api.RunningController(ctx, c, v.ControllerID)
		res, err := c.ContinueFlow(ctx, v.ID, req)
		if err != nil {
			return err
		}
		if !tool {
			writeContinuation(e.stderr, res)
		}
		end, err := e.followPipeline(ctx, l, res.Flow.ID, tool)
		if err != nil {
			return err
		}
		return e.reportPipeline(ctx, l, end, tool)
	})
}

// check refuses a rerun of a file other than the one flow f ran.
func (r rerunFrom) check(f *sdk.Flow) error {
	if r.file == "" {
		return nil
	}
	abs, err := filepath.Abs(r.file)
	if err != nil {
		return err
	}
	var st struct {
		File string `json:"file"`
	}
	if err := json.Unmarshal(f.State, &st); err != nil || st.File != abs {
		return usageError{fmt.Errorf("flow %s ran %q, not %s: rerun it from a step with the file it ran", f.ID, st.File, abs)}
	}
	return nil
}
