package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/user"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// localUser is the OS user's name, for owner keys and decisions; empty
// when it cannot be found.
func localUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// localOwner is the owner key of work started from this CLI.
func localOwner() string {
	if u := localUser(); u != "" {
		return "local:" + u
	}
	return "local"
}

// newDecision starts a decision made now by by, or by the OS user.
func newDecision(by string) pipeline.Decision {
	if by == "" {
		by = localUser()
	}
	return pipeline.Decision{By: by, At: time.Now().UTC().Format(time.RFC3339)}
}

func newGateCmds(e *env) []*cobra.Command {
	mk := func(use, short string, approved *bool, input bool) *cobra.Command {
		var (
			by, response string
			expected     int64
			asJSON       bool
		)
		cmd := &cobra.Command{
			Use:   use,
			Short: short,
			Args:  args(1, "one flow id"),
			RunE: func(cmd *cobra.Command, a []string) error {
				d := newDecision(by)
				d.Approved = approved
				if input {
					if !json.Valid([]byte(response)) {
						return usageError{fmt.Errorf("--response-json is not valid JSON: %s", clip(response, 60))}
					}
					d.Response = json.RawMessage(response)
				}
				var exp *int64
				if cmd.Flags().Changed("expected-revision") {
					exp = &expected
				}
				return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
					f, err := decide(ctx, c, a[0], exp, input, d)
					if err != nil {
						return err
					}
					return printer{e.stdout, asJSON}.emit(f, func(w io.Writer) {
						fmt.Fprintf(w, "Recorded the decision on flow %s (by %s); the flow resumes (revision %d).\n", f.ID, clean(d.By), f.Revision)
					})
				})
			},
		}
		cmd.Flags().StringVar(&by, "by", "", "who decides (default: the OS user)")
		cmd.Flags().Int64Var(&expected, "expected-revision", 0, "only decide if the flow is still at this revision")
		cmd.Flags().BoolVar(&asJSON, "json", false, "print the flow as JSON")
		if input {
			cmd.Flags().StringVar(&response, "response-json", "", "the answer, as JSON (required)")
			_ = cmd.MarkFlagRequired("response-json")
		}
		return cmd
	}
	yes, no := true, false
	return []*cobra.Command{
		mk("approve <flow-id>", "Approve the gate a pipeline flow waits at", &yes, false),
		mk("deny <flow-id>", "Deny the gate a pipeline flow waits at", &no, false),
		mk("input <flow-id> --response-json J", "Answer the input gate a pipeline flow waits at", nil, true),
	}
}

// decide records d at the gate flow id waits at and resumes the flow, in
// one guarded write. A gate is decided at most once.
func decide(ctx context.Context, c api.Client, id string, expected *int64, input bool, d pipeline.Decision) (*sdk.Flow, error) {
	v, err := c.ViewFlow(ctx, id)
	if err != nil {
		return nil, err
	}
	f := v.Flow
	var g pipeline.Gate
	if f.Status != sdk.FlowWaiting || json.Unmarshal(f.Wait, &g) != nil || g.Step == "" {
		return nil, fmt.Errorf("%w: flow %s is %s and waits at no gate; list open gates with flowgate approvals", sdk.ErrInvalid, f.ID, f.Status)
	}
	if want := map[bool]string{false: "approval", true: "input"}[input]; g.Kind != want {
		return nil, fmt.Errorf("%w: flow %s waits at an %s gate (step %s), not an %s gate", sdk.ErrInvalid, f.ID, g.Kind, g.Step, want)
	}
	if expected != nil && *expected != f.Revision {
		return nil, &sdk.RevisionConflictError{Expected: *expected, Current: f}
	}
	var state map[string]json.RawMessage
	if err := json.Unmarshal(f.State, &state); err != nil || state == nil {
		return nil, fmt.Errorf("flow %s has no pipeline state; is it a pipeline flow?", f.ID)
	}
	decisions := map[string]pipeline.Decision{}
	if raw, ok := state["decisions"]; ok {
		if err := json.Unmarshal(raw, &decisions); err != nil {
			return nil, fmt.Errorf("flow %s: its decisions are damaged: %w", f.ID, err)
		}
	}
	// A decided gate the controller refused (an invalid response, the
	// wrong approver) waits again with an error: it may be answered anew.
	if prev, ok := decisions[g.Step]; ok && g.Error == "" {
		return nil, fmt.Errorf("%w: the gate at step %s of flow %s was already decided by %s at %s", sdk.ErrInvalid, g.Step, f.ID, prev.By, prev.At)
	}
	decisions[g.Step] = d
	b, err := json.Marshal(decisions)
	if err != nil {
		return nil, err
	}
	state["decisions"] = b
	next, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	return c.UpdateFlow(ctx, f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowRunning, State: next})
}

func newApprovalsCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List every open approval or input gate",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				page, err := c.ViewFlows(ctx, engine.FlowFilter{Status: sdk.FlowWaiting})
				if err != nil {
					return err
				}
				type open struct {
					Flow  string        `json:"flow_id"`
					Goal  string        `json:"goal"`
					Since time.Time     `json:"since"`
					Gate  pipeline.Gate `json:"gate"`
					Rev   int64         `json:"revision"`
				}
				out := []open{}
				for _, v := range page.Flows {
					var g pipeline.Gate
					if json.Unmarshal(v.Wait, &g) != nil || (g.Kind != "approval" && g.Kind != "input") {
						continue
					}
					out = append(out, open{Flow: v.ID, Goal: v.Goal, Since: v.UpdatedAt, Gate: g, Rev: v.Revision})
				}
				return printer{e.stdout, asJSON}.emit(map[string]any{"count": len(out), "approvals": out}, func(w io.Writer) {
					fmt.Fprintf(w, "Open gates: %d\n", len(out))
					if len(out) == 0 {
						return
					}
					var t table
					t.add("Id", "Kind", "Flow", "Step", "Age", "Prompt")
					for _, o := range out {
						id := o.Gate.ApprovalID
						if id == "" { // input gates have no short id: the flow id answers them
							id = o.Flow
						}
						t.add(id, o.Gate.Kind, o.Flow, clip(o.Gate.Step, 24), time.Since(o.Since).Round(time.Second).String(), clip(o.Gate.Prompt, 60))
					}
					t.write(w)
					fmt.Fprintln(w, "Answer with: flowgate tasks flow approve|deny <flow-id>, or tasks flow input <flow-id> --response-json J")
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
