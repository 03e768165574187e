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
	"github.com/flowgate/flowgate/host/api/apitype"
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

// newDecision starts a decision by by, or by the OS user.
func newDecision(by string) sdk.Decision {
	if by == "" {
		by = localUser()
	}
	return sdk.Decision{By: by}
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
			Long: short + `.

The flow is named by its id, its owner key, or the short approval id
flowgate approvals shows. With a gateway running, it resumes the flow.
With none, this command hosts one in-process until the flow parks at
its next gate or ends, as flowgate pipeline resume does.

The answer is recorded as --by's. An approval gate that names who may
approve it (a step's required_approver, or require_different_approver
with initiated_by) refuses anyone else at once, with exit 2 and who may
approve; the flow stays at the gate. A denial is never refused so.`,
			Args: args(1, "one flow id or approval id"),
			RunE: func(cmd *cobra.Command, a []string) error {
				in := apitype.GateDecision{Kind: sdk.GateApproval, Decision: newDecision(by)}
				in.Decision.Approved = approved
				if input {
					if !json.Valid([]byte(response)) {
						return usageError{fmt.Errorf("--response-json is not valid JSON: %s", clip(response, 60))}
					}
					in.Kind, in.Decision.Response = sdk.GateInput, json.RawMessage(response)
				}
				if cmd.Flags().Changed("expected-revision") {
					in.Expected = &expected
				}
				return e.withLink(cmd, func(ctx context.Context, l *link) error {
					return e.decideGate(ctx, l, a[0], in, asJSON)
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
		mk("approve <flow-id|approval-id>", "Approve the gate a pipeline flow waits at", &yes, false),
		mk("deny <flow-id|approval-id>", "Deny the gate a pipeline flow waits at", &no, false),
		mk("input <flow-id|approval-id> --response-json J", "Answer the input gate a pipeline flow waits at", nil, true),
	}
}

func newApprovalsCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List every open approval or input gate",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				out, err := c.OpenGates(ctx, apitype.GateFilter{})
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(map[string]any{"count": len(out), "approvals": out}, func(w io.Writer) {
					fmt.Fprintf(w, "Open gates: %d\n", len(out))
					if len(out) == 0 {
						return
					}
					var t table
					t.add("Id", "Kind", "Flow", "Step", "Age", "Prompt")
					for _, o := range out {
						g := o.Wait()
						id := g.ApprovalID
						if id == "" { // a gate another controller opened without a short id: its flow id answers it
							id = o.FlowID
						}
						t.add(id, g.Kind, o.FlowID, clip(g.Step, 24), time.Since(o.Since).Round(time.Second).String(), clip(g.Prompt, 60))
					}
					t.write(w)
					fmt.Fprintln(w, "Answer with: flowgate tasks flow approve|deny <id>, or flowgate tasks flow input <id> --response-json J")
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
