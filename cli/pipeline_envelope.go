package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// envelope is Lobster's tool-mode answer (protocolVersion 1). It is
// written by write, as Lobster writes it, never through encoding/json.
type envelope struct {
	OK     bool
	Status string
	// Output is the pipeline's output as JSON; nil is [].
	Output json.RawMessage
	// RequiresApproval and RequiresInput are the gate the flow waits at,
	// in Lobster's key order; nil is null.
	RequiresApproval, RequiresInput *flows.Object
	Error                           *envelopeError
	// FlowID is flowgate's addition: the flow that ran, last.
	FlowID string
}

type envelopeError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// failed is the envelope of a run that failed with a message of kind
// ("runtime_error", "parse_error").
func failed(kind, msg, flowID string) envelope {
	return envelope{Error: &envelopeError{Type: kind, Message: msg}, FlowID: flowID}
}

// write prints env as Lobster's JSON.stringify(envelope, null, 2) does:
// keys in Lobster's order, <, > and & and U+2028 as they are, so a tool
// reading both sees the same bytes. A failure carries only the error, as
// in Lobster.
func (env envelope) write(w io.Writer) error {
	o := flows.NewObject(8)
	o.Set("protocolVersion", 1.0)
	o.Set("ok", env.OK)
	if env.Error != nil {
		e := flows.NewObject(2)
		e.Set("type", env.Error.Type)
		e.Set("message", env.Error.Message)
		o.Set("error", e)
	} else {
		o.Set("status", env.Status)
		out, err := envelopeOutput(env.Output)
		if err != nil {
			return err
		}
		o.Set("output", out)
		o.Set("requiresApproval", nullable(env.RequiresApproval))
		o.Set("requiresInput", nullable(env.RequiresInput))
	}
	if env.FlowID != "" {
		o.Set("flowId", env.FlowID)
	}
	_, err := fmt.Fprintln(w, flows.StringifyIndent(o, "  "))
	return err
}

// writePaused prints a flow stopped at a gate in human mode, as Lobster
// does: {status, output: [], requiresApproval, requiresInput}.
func (env envelope) writePaused(w io.Writer) error {
	o := flows.NewObject(4)
	o.Set("status", env.Status)
	o.Set("output", []any{})
	o.Set("requiresApproval", nullable(env.RequiresApproval))
	o.Set("requiresInput", nullable(env.RequiresInput))
	_, err := fmt.Fprintln(w, flows.StringifyIndent(o, "  "))
	return err
}

func envelopeOutput(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return []any{}, nil
	}
	return flows.DecodeJSON(raw)
}

func nullable(o *flows.Object) any {
	if o == nil {
		return nil
	}
	return o
}

// gateRequest is the gate of a waiting flow (its wait record) as
// Lobster's approval_request or input_request, keys in Lobster's order
// and the items, subject and schema as they were written; approvalId,
// flowgate's short id of the gate, comes last. An absent preview or
// subject is left out, as Lobster leaves it out.
func gateRequest(wait json.RawMessage) (*flows.Object, bool) {
	var g sdk.Wait
	_ = json.Unmarshal(wait, &g)
	var raw struct {
		Subject json.RawMessage
	}
	_ = json.Unmarshal(wait, &raw)
	decoded := func(b json.RawMessage, fallback any) any {
		if v, err := flows.DecodeJSON(b); len(b) > 0 && err == nil {
			return v
		}
		return fallback
	}
	o := flows.NewObject(7)
	input := g.Kind == sdk.GateInput
	if input {
		o.Set("type", "input_request")
		o.Set("prompt", g.Prompt)
		o.Set("responseSchema", decoded(g.Schema, nil))
		if s := decoded(raw.Subject, nil); s != nil {
			o.Set("subject", s)
		}
	} else {
		o.Set("type", "approval_request")
		o.Set("prompt", g.Prompt)
		o.Set("items", decoded(g.Items, nil))
		if g.Preview != "" {
			o.Set("preview", g.Preview)
		}
	}
	o.Set("resumeToken", g.ResumeToken)
	o.Set("approvalId", g.ApprovalID)
	return o, input
}
