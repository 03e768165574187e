package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// approveCommand is the approve stage of one pass over a pipeline step
// (lobster-format §14.3). It parks the flow as an approval step does, at
// the gate "<step id>/stage<N>": durable, listed by flowgate approvals,
// answered by pipeline resume or tasks flow approve|deny. The wait
// carries the items that reached the stage. Approved, the items go on to
// the next stage; denied, the run is cancelled, as Lobster reports it.
// Unlike Lobster, an approve stage in a workflow file's pipeline: step
// parks the flow too, where Lobster fails the step ("halted for approval
// inside pipeline stage approve").
func (p *pipe) approveCommand() *flows.Command {
	return &flows.Command{
		Name:        "approve",
		Description: "Wait for a person to approve the items: approve [--prompt P] [--preview-from-stdin] [--limit N]",
		SideEffects: []string{"waits_for_approval"},
		Run:         p.approve,
	}
}

// gateAt is the gate step of a stage, "<step id>/stage<N>", and its
// prompt: --prompt, or def when none is given.
func (p *pipe) gateAt(call *flows.Call, def string) (step, prompt string) {
	step = p.stageID(call.Stage)
	prompt, ok := call.Args.String("prompt")
	if !ok || prompt == "" {
		prompt = def
	}
	return step, prompt
}

// park stops the pipeline at gate g, where its step parks the flow;
// cancel stops it to end the run, as a denial does. Either way the stage
// waits: the flow moves on when the gate is answered.
func (p *pipe) park(g parkedGate) (flows.StageOutput, error) {
	p.gate = &g
	return flows.StageOutput{}, errStageWaits
}

func (p *pipe) cancel() (flows.StageOutput, error) {
	p.cancelled = true
	return flows.StageOutput{}, errStageWaits
}

func (p *pipe) approve(_ context.Context, call *flows.Call) (flows.StageOutput, error) {
	if !p.gates {
		//lint:ignore ST1005 the reference's message
		return flows.StageOutput{}, fmt.Errorf("Workflow step %s halted for approval inside pipeline stage approve. Use a separate approval step in the workflow file.", p.name)
	}
	r := p.r
	step, prompt := p.gateAt(call, "Approve?")
	items := call.Items
	if items == nil {
		items = []any{}
	}
	g := parkedGate{Kind: sdk.GateApproval, Step: step, Prompt: prompt, ResumeToken: resumeToken(r.flow.ID, step)}
	g.setItems(items)
	g.ApprovalID = approvalID(g.ResumeToken)
	if call.Args.Has("preview-from-stdin") {
		g.Preview = approvePreview(items, call.Args)
	}
	d, decided := r.decision(step)
	switch {
	case !decided:
		return p.park(g)
	case d.Approved == nil:
		g.Error = fmt.Sprintf("the decision at %s neither approves nor denies; answer with approve or deny", step)
		return p.park(g)
	case !*d.Approved:
		return p.cancel()
	}
	return flows.StageOutput{Items: call.Items}, nil
}

// approvePreview is Lobster's approval preview: string items joined by
// newlines, else the first --limit (default 5) items as indented JSON;
// at most previewLimit characters.
func approvePreview(items []any, args flows.StageArgs) string {
	lines := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			lines = nil
			break
		}
		lines = append(lines, s)
	}
	if lines != nil || len(items) == 0 {
		return clip(strings.Join(lines, "\n"), previewLimit)
	}
	limit := 5
	if s, ok := args.String("limit"); ok {
		if _, err := fmt.Sscan(s, &limit); err != nil || limit < 0 {
			limit = 5
		}
	}
	return clip(flows.StringifyIndent(items[:min(limit, len(items))], "  "), previewLimit)
}

// askSchema is ask's default response schema: a decision and optional
// feedback.
var askSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"decision": map[string]any{"type": "string", "enum": []any{"approve", "reject", "redraft"}},
		"feedback": map[string]any{"type": "string"},
	},
	"required": []any{"decision"},
}

// askCommand is the ask stage (lobster-format §14.3): it parks the flow
// at an input gate "<step id>/stage<N>" and, once a response its schema
// accepts is recorded, outputs that response as the one item.
func (p *pipe) askCommand() *flows.Command {
	return &flows.Command{
		Name:        "ask",
		Description: "Wait for a person's structured answer: ask [--prompt P] [--schema JSON] [--subject-from-stdin]; outputs the response",
		SideEffects: []string{"waits_for_input"},
		Run:         p.ask,
	}
}

func (p *pipe) ask(_ context.Context, call *flows.Call) (flows.StageOutput, error) {
	if !p.gates {
		return flows.StageOutput{}, errors.New("requestInput is not supported in this pipeline context")
	}
	r := p.r
	step, prompt := p.gateAt(call, "Input required")
	schema := askSchema
	if text, ok := call.Args.String("schema"); ok {
		var custom map[string]any // never into askSchema, which is shared
		if err := json.Unmarshal([]byte(text), &custom); err != nil || custom == nil {
			return flows.StageOutput{}, fmt.Errorf("ask --schema must be a JSON object (got %s)", text)
		}
		schema = custom
	}
	g := parkedGate{Kind: sdk.GateInput, Step: step, Prompt: prompt, Schema: schema, ResumeToken: resumeToken(r.flow.ID, step)}
	g.ApprovalID = approvalID(g.ResumeToken)
	if call.Args.Has("subject-from-stdin") {
		g.Subject = map[string]any{"text": clip(itemsText(call.Items), previewLimit)}
	}
	d, decided := r.decision(step)
	switch {
	case !decided:
		return p.park(g)
	case d.Approved != nil && !*d.Approved:
		return p.cancel()
	}
	var response any
	if len(d.Response) > 0 {
		response, _ = flows.DecodeJSON(d.Response)
	}
	if err := flows.ValidateResponse(step, schema, response); err != nil {
		g.Error = err.Error()
		return p.park(g)
	}
	return flows.StageOutput{Items: []any{response}}, nil
}
