package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// startPipeline creates the managed flow that runs in (its file or its
// pipeline string) with args from the current directory, with goal name;
// a gate left unanswered for gateTimeout (zero: for ever) is denied as
// gate-expired. flow gives the flow's budget and finish notification; the
// rest of it is filled in.
func startPipeline(ctx context.Context, c api.Client, in flows.Invocation, args map[string]any, name string, gateTimeout time.Duration, flow apitype.CreateFlowInput) (*sdk.Flow, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if args != nil {
		if raw, err = json.Marshal(args); err != nil {
			return nil, err
		}
	}
	in.Args, in.Cwd, in.GateTimeoutMs = raw, cwd, gateTimeout.Milliseconds()
	state, err := in.State()
	if err != nil {
		return nil, err
	}
	flow.ControllerID, flow.OwnerKey, flow.Goal, flow.State = flows.PipelineController, localOwner(), name, state
	return c.CreateFlow(ctx, flow)
}

// followPipeline waits until the flow ends or stops at a gate, printing
// the wake banner of each step that continues a session and each step as
// it finishes, and returns the flow. When the gateway stops meanwhile, it
// follows on through the next one (see link).
func (e *env) followPipeline(ctx context.Context, l *link, id string, quiet bool) (apitype.FlowView, error) {
	seen, woke := map[string]bool{}, map[string]bool{}
	var (
		p    pace
		last int64
		mark string
		prev apitype.FlowView
	)
	for {
		changed := l.changed()
		v, err := l.nextView(ctx, id, mark)
		if err != nil {
			if ctx.Err() != nil && mark != "" {
				return prev, ctx.Err()
			}
			if gone(err) {
				err = lostFlow(id, err)
			}
			return v, err
		}
		for _, t := range v.Tasks {
			if s := t.Session; s != nil && s.Banner != "" && !woke[t.ID] && !quiet {
				woke[t.ID] = true
				fmt.Fprintln(e.stderr, clean(s.Banner))
			}
			if t.Status.Terminal() && !seen[t.ID] && !quiet {
				seen[t.ID] = true
				fmt.Fprintf(e.stderr, "step %s: %s\n", clean(t.Title()), t.Status)
			}
		}
		if v.Status.Terminal() || v.Status == sdk.FlowWaiting || v.Status == sdk.FlowBlocked {
			return v, nil
		}
		if l.waiter() != nil {
			mark, prev = api.FlowMark(v), v
			continue
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-changed:
		case <-time.After(p.after(v.Revision != last)):
		}
		last = v.Revision
	}
}

// pipelineEnvelope describes where a pipeline flow stands, as Lobster
// would; kept reads its output when the output is kept in the store.
func pipelineEnvelope(v apitype.FlowView, kept sdk.KeptReader) (envelope, int) {
	env := envelope{OK: true, FlowID: v.ID}
	switch v.Status {
	case sdk.FlowSucceeded:
		env.Status = "ok"
		out, err := v.Output.ReadValue(kept)
		if err != nil {
			return failed("runtime_error", err.Error(), v.ID), exitFailure
		}
		env.Output = out
	case sdk.FlowCancelled:
		env.Status = "cancelled"
	case sdk.FlowWaiting:
		req, input := gateRequest(v.Wait)
		if input {
			env.Status, env.RequiresInput = "needs_input", req
		} else {
			env.Status, env.RequiresApproval = "needs_approval", req
		}
	default:
		msg := v.BlockedSummary
		if msg == "" {
			msg = fmt.Sprintf("the pipeline flow %s is %s", v.ID, v.Status)
		}
		return failed("runtime_error", msg, v.ID), exitFailure
	}
	return env, exitOK
}

// reportPipeline prints where the flow stands and returns the exit status.
// An output kept in the store is read through l's gateway. What the
// renderer of a pipeline string printed comes first, as Lobster prints
// it ahead of its envelope.
func (e *env) reportPipeline(ctx context.Context, l *link, v apitype.FlowView, tool bool) error {
	kept := func(sum string) ([]byte, error) { return l.c.KeptValue(ctx, v.ID, sum) }
	env, code := pipelineEnvelope(v, kept)
	if env.Status == "ok" {
		rendered, err := v.Output.ReadText(kept)
		if err != nil {
			env, code = failed("runtime_error", err.Error(), v.ID), exitFailure
		}
		fmt.Fprint(e.stdout, rendered)
	}
	if tool {
		if err := env.write(e.stdout); err != nil {
			return err
		}
		return exitStatus{code: code}
	}
	if !env.OK {
		return exitStatus{code: code, msg: env.Error.Message}
	}
	if env.Status == "ok" {
		if len(env.Output) > 0 && string(env.Output) != "[]" {
			// Written as Lobster writes it (JSON.stringify), not through
			// encoding/json, which would escape <, > and &.
			out, err := flows.DecodeJSON(env.Output)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(e.stdout, flows.StringifyIndent(out, "  "))
			return err
		}
		return nil
	}
	if err := env.writePaused(e.stdout); err != nil {
		return err
	}
	if env.Status != "cancelled" {
		answer := "--approve yes|no"
		if env.Status == "needs_input" {
			answer = "--response-json J"
		}
		fmt.Fprintf(e.stderr, "Flow %s waits at a gate. Answer with: flowgate pipeline resume --id %s %s\n", v.ID, v.ID, answer)
	}
	return nil
}

func newPipelineResumeCmd(e *env) *cobra.Command {
	var (
		token, id, approve, response, mode, by string
		cancel                                 bool
	)
	cmd := &cobra.Command{
		Use:   "resume (--token T | --id ID) (--approve yes|no | --response-json J | --cancel)",
		Short: "Answer a pipeline flow's gate and follow it on",
		Args:  args(0, "flags only"),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			tool := mode == "tool"
			if tool {
				defer func() { err = e.refuseAsTool(err) }()
			}
			if (token == "") == (id == "") {
				return usageError{fmt.Errorf("pass exactly one of --token and --id")}
			}
			answers := 0
			for _, set := range []bool{approve != "", response != "", cancel} {
				if set {
					answers++
				}
			}
			if answers != 1 {
				return usageError{fmt.Errorf("pass exactly one of --approve yes|no, --response-json J and --cancel")}
			}
			if approve != "" && approve != "yes" && approve != "no" {
				return usageError{fmt.Errorf("--approve %q: want yes or no", approve)}
			}
			return e.withLink(cmd, func(ctx context.Context, l *link) error {
				c := l.c
				flowID, err := findGate(ctx, c, token, id)
				if err != nil {
					return err
				}
				in := apitype.GateDecision{Flow: flowID, Kind: sdk.GateApproval, Decision: newDecision(by)}
				switch {
				case cancel:
					_, err = c.CancelFlow(ctx, flowID, in.Decision.By)
				case approve != "":
					yes := approve == "yes"
					in.Decision.Approved = &yes
					_, err = c.DecideGate(ctx, in)
				default:
					if !json.Valid([]byte(response)) {
						return usageError{fmt.Errorf("--response-json is not valid JSON")}
					}
					in.Kind, in.Decision.Response = sdk.GateInput, json.RawMessage(response)
					_, err = c.DecideGate(ctx, in)
				}
				if err != nil {
					return err
				}
				v, err := e.followPipeline(ctx, l, flowID, tool)
				if err != nil {
					return err
				}
				return e.reportPipeline(ctx, l, v, tool)
			})
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "the gate's resume token")
	cmd.Flags().StringVar(&id, "id", "", "the gate's short approval id (or the flow id)")
	cmd.Flags().StringVar(&approve, "approve", "", "yes or no")
	cmd.Flags().StringVar(&response, "response-json", "", "the answer to an input gate, as JSON")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "cancel the flow instead")
	cmd.Flags().StringVar(&by, "by", "", "who decides (default: the OS user)")
	cmd.Flags().StringVar(&mode, "mode", "", "tool: print Lobster's JSON envelope")
	return cmd
}

// refuseAsTool prints Lobster's error envelope on stdout for err, a
// tool-mode command's refusal, and returns err so that the exit code and
// the message on stderr stay what they are: parse_error for what exits 2
// (bad flags, a token or id no open gate has, a decision the gate does not
// take), runtime_error for anything else. An exitStatus has already
// printed its envelope and is returned as it is.
func (e *env) refuseAsTool(err error) error {
	var printed exitStatus
	if err == nil || errors.As(err, &printed) {
		return err
	}
	kind := "runtime_error"
	if exitCode(err) == exitUsage {
		kind = "parse_error"
	}
	_ = failed(kind, err.Error(), "").write(e.stdout)
	return err
}

// findGate finds the pipeline flow waiting at the gate with this token or
// short id (a flow id works too).
func findGate(ctx context.Context, c api.Client, token, id string) (string, error) {
	gates, err := c.OpenGates(ctx, apitype.GateFilter{ControllerID: flows.PipelineController, Token: token, ID: id})
	if err != nil {
		return "", err
	}
	if len(gates) > 0 {
		return gates[0].FlowID, nil
	}
	what := "token " + token
	if id != "" {
		what = "id " + id
	}
	return "", fmt.Errorf("%w: no open gate has %s: it was answered already, or never existed; list open gates with flowgate approvals", sdk.ErrInvalid, what)
}
