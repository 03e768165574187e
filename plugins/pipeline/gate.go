package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// previewLimit is how many characters of a step's output an approval
// preview shows (lobster-format §8.1).
const previewLimit = 2000

// maxGateItems bounds the JSON of the items an approval keeps in the
// flow's wait (an approve stage's, or a step's), so that the wait stays
// within maxWait.
const maxGateItems = 192 << 10

// setItems sets the approval's items: the first ones whose JSON fits in
// maxGateItems, with ItemsTotal and ItemsTruncated set when some are left
// out.
func (g *parkedGate) setItems(items []any) {
	g.Items = items
	size := 2
	for i, it := range items {
		b, _ := json.Marshal(it)
		if size += len(b) + 1; size > maxGateItems {
			g.Items, g.ItemsTotal, g.ItemsTruncated = items[:i], len(items), true
			return
		}
	}
}

// subjectLimit is the size above which an input gate's subject is shown
// truncated in the flow's wait; the full subject stays in the result
// (lobster-format §9).
const subjectLimit = 192000

// parkedGate is the flow's wait while it stops at an approval or input
// gate: the JSON in its wait field. It is an sdk.Wait with fields of its
// own: the fields they share have the same names, so the gateway lists
// and answers pipeline gates as any other (sdk.ParseGate) and enforces
// the approver rules (sdk.Wait.CheckApproval). Readers outside this
// package read it as an sdk.Wait. Fields that do not apply to a kind are
// omitted.
type parkedGate struct {
	Kind    string `json:"kind"`
	Step    string `json:"step"`
	Prompt  string `json:"prompt"`
	Preview string `json:"preview,omitempty"`
	// Items is always an array for an approval, absent for an input. An
	// approval's items are kept up to maxGateItems bytes: past that,
	// Items holds the first ones, ItemsTotal counts them all and
	// ItemsTruncated is set (the approved run goes on with all of them).
	Items                    any            `json:"items,omitempty"`
	ItemsTotal               int            `json:"items_total,omitempty"`
	ItemsTruncated           bool           `json:"items_truncated,omitempty"`
	Schema                   map[string]any `json:"schema,omitempty"`
	Defaults                 any            `json:"defaults,omitempty"`
	Subject                  any            `json:"subject,omitempty"`
	ResumeToken              string         `json:"resume_token"`
	ApprovalID               string         `json:"approval_id,omitempty"`
	InitiatedBy              string         `json:"initiated_by,omitempty"`
	RequiredApprover         string         `json:"required_approver,omitempty"`
	RequireDifferentApprover bool           `json:"require_different_approver,omitempty"`
	// Error says why the last decision at this gate was not accepted.
	Error string `json:"error,omitempty"`
	// Until is when the gateway denies the gate as gate-expired if nobody
	// answers it (the run's gate timeout); zero waits for ever.
	Until time.Time `json:"until,omitzero"`
}

// resumeToken names a gate: the flow and the step.
func resumeToken(flowID, stepID string) string { return flowID + ":" + stepID }

// approvalID is the short id of a gate: the first 8 hex digits of the
// token's SHA-256.
func approvalID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])[:8]
}

// approvalGate builds the approval request for step s from its result
// (lobster-format §8.1): from json.requiresApproval or a json carrying a
// prompt when the step's output asks for approval itself, else from the
// step's approval config, whose prompt and preview are filled in as a
// run: command is (${arg}, then $step.path refs, through fill), so a
// person reads the values and not the template. Identity fields not
// given fall back to the step's environment
// (LOBSTER_APPROVAL_INITIATED_BY, LOBSTER_APPROVAL_REQUIRED_APPROVER,
// LOBSTER_APPROVAL_REQUIRE_DIFFERENT_APPROVER).
func approvalGate(flowID string, s *flows.Step, r flows.StepResult, env map[string]string, fill func(string) string) parkedGate {
	g := parkedGate{Kind: sdk.GateApproval, Step: s.ID, ResumeToken: resumeToken(flowID, s.ID)}
	var items []any
	g.ApprovalID = approvalID(g.ResumeToken)
	cfg := s.Approval
	if cfg == nil {
		cfg = &flows.Approval{}
	}
	if src := requestSource(r); src != nil {
		field := func(k string) any { v, _ := src.Get(k); return v }
		g.Prompt, _ = field("prompt").(string)
		items = asItems(field("items"), false)
		g.Preview = previewText(field("preview"))
		g.InitiatedBy = firstString(src, "initiatedBy", "initiated_by")
		g.RequiredApprover = firstString(src, "requiredApprover", "required_approver")
		g.RequireDifferentApprover = truthy(field("requireDifferentApprover")) || truthy(field("require_different_approver"))
	} else {
		g.Prompt = fill(flows.ApprovalPrompt(s))
		if cfg.HasItems {
			items = asItems(cfg.Items, false)
		} else if r.HasJSON {
			items = asItems(r.JSON, true)
		}
		if cfg.HasPreview {
			g.Preview = fill(cfg.Preview)
		} else if r.Stdout != nil {
			g.Preview = clip(strings.TrimSpace(*r.Stdout), previewLimit)
		} else if r.HasJSON {
			g.Preview = clip(flows.Stringify(r.JSON), previewLimit)
		}
	}
	if items == nil {
		items = []any{}
	}
	g.setItems(items)
	g.InitiatedBy = firstNonEmpty(g.InitiatedBy, cfg.InitiatedBy, env["LOBSTER_APPROVAL_INITIATED_BY"])
	g.RequiredApprover = firstNonEmpty(g.RequiredApprover, cfg.RequiredApprover, env["LOBSTER_APPROVAL_REQUIRED_APPROVER"])
	if !g.RequireDifferentApprover {
		if cfg.RequireDifferentApprover != nil {
			g.RequireDifferentApprover = *cfg.RequireDifferentApprover
		} else {
			switch strings.ToLower(strings.TrimSpace(env["LOBSTER_APPROVAL_REQUIRE_DIFFERENT_APPROVER"])) {
			case "1", "true", "yes", "y":
				g.RequireDifferentApprover = true
			}
		}
	}
	return g
}

// checkApprover enforces a gate's identity rules on an approval by who
// (lobster-format §8.3); a denial is never checked. The gateway refuses
// such an approval before it records it (sdk.Wait.CheckApproval, the
// same rules and messages); this check is for an approval a gateway of
// before that recorded, which the controller refuses by parking the
// flow at the gate again with the reason.
func checkApprover(s *flows.Step, g parkedGate, who string) error {
	if g.RequiredApprover == "" && !g.RequireDifferentApprover {
		return nil
	}
	switch {
	case who == "":
		//lint:ignore ST1005 the reference's message
		return fmt.Errorf("Workflow step %s approval requires approver identity; decide with --by NAME", s.ID)
	case g.RequiredApprover != "" && who != g.RequiredApprover:
		//lint:ignore ST1005 the reference's message
		return fmt.Errorf("Workflow step %s approval requires approver '%s', got '%s'", s.ID, g.RequiredApprover, who)
	case g.RequireDifferentApprover && g.InitiatedBy != "" && who == g.InitiatedBy:
		//lint:ignore ST1005 the reference's message
		return fmt.Errorf("Workflow step %s approval must be granted by someone other than '%s'", s.ID, g.InitiatedBy)
	}
	return nil
}

// inputGate builds the input request for step s over subject
// (lobster-format §9), its prompt filled in through fill as an
// approval's is. It has a short id as an approval has, so people answer
// both alike (Lobster gives inputs none). A subject too large for the
// wait is shown truncated, with its size and a preview.
func inputGate(flowID string, s *flows.Step, subject any, fill func(string) string) parkedGate {
	g := parkedGate{Kind: sdk.GateInput, Step: s.ID, Prompt: fill(s.Input.Prompt), Schema: s.Input.ResponseSchema,
		Defaults: s.Input.Defaults, Subject: subject, ResumeToken: resumeToken(flowID, s.ID)}
	g.ApprovalID = approvalID(g.ResumeToken)
	if b, err := json.Marshal(subject); err == nil && len(b) > subjectLimit {
		g.Subject = map[string]any{"truncated": true, "bytes": len(b), "preview": clip(string(b), previewLimit)}
	}
	return g
}

// requestSource returns the object a step's own JSON output offers as its
// approval request, or nil.
func requestSource(r flows.StepResult) *flows.Object {
	obj, ok := r.JSON.(*flows.Object)
	if !r.HasJSON || !ok {
		return nil
	}
	if v, _ := obj.Get("requiresApproval"); v != nil {
		if req, ok := v.(*flows.Object); ok {
			if _, ok := req.Get("prompt"); ok {
				return req
			}
		}
	}
	if v, _ := obj.Get("prompt"); truthy(v) {
		return obj
	}
	return nil
}

// asItems turns a value into approval items: an array is its elements;
// with wrap, any other non-nil value is one item.
func asItems(v any, wrap bool) []any {
	if a, ok := v.([]any); ok {
		return a
	}
	if wrap && v != nil {
		return []any{v}
	}
	return nil
}

func previewText(v any) string {
	switch p := v.(type) {
	case nil:
		return ""
	case string:
		return p
	default:
		return flows.Stringify(p)
	}
}

func firstString(o *flows.Object, keys ...string) string {
	for _, k := range keys {
		v, _ := o.Get(k)
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// truthy is JavaScript truthiness for decoded JSON values.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

// clip returns the first n characters of s.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
