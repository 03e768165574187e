package plugintest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// FollowUpGoal is the goal the create-flow case asks a follow-up flow
// for, in its flow's state: {"follow_up": FollowUpGoal}. A plugin that
// creates flows when a flow asks for one does it there.
const FollowUpGoal = "flowgate plugins test: a follow-up"

// createCall is one Host.CreateFlow call the plugin made.
type createCall struct {
	key     string
	flowID  string
	created bool
	// lost says the harness kept the answer from the plugin, as if the
	// gateway had died after the commit.
	lost bool
}

// loseNextCreate arms the loss of the answer to the plugin's next
// CreateFlow, and records its calls afresh, noted on flowID, from now on.
func (r *recorder) loseNextCreate(flowID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.loseCreate, r.createsOn, r.creates = true, flowID, nil
}

// createCalls returns the CreateFlow calls recorded so far.
func (r *recorder) createCalls() []createCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]createCall(nil), r.creates...)
}

// CreateFlow records the call; when armed, the flow is created but the
// plugin is told the gateway is unavailable, so it must ask again.
func (h recordingHost) CreateFlow(ctx context.Context, req sdk.FlowRequest) (*sdk.Flow, bool, error) {
	f, created, err := h.Host.CreateFlow(ctx, req)
	h.r.mu.Lock()
	lose := err == nil && h.r.loseCreate
	h.r.loseCreate = h.r.loseCreate && !lose
	on := h.r.createsOn
	if err == nil {
		h.r.creates = append(h.r.creates, createCall{key: req.IdempotencyKey, flowID: f.ID, created: created, lost: lose})
	}
	h.r.mu.Unlock()
	what := fmt.Sprintf("CreateFlow %q", req.IdempotencyKey)
	if err == nil {
		what += fmt.Sprintf(" → flow %s, created %v", f.ID, created)
	}
	if lose {
		h.r.note(on, "%s: ok, but the harness lost the answer", what)
		return nil, false, fmt.Errorf("%w: flowgate plugins test lost the answer to this CreateFlow; ask again with the same key", sdk.ErrUnavailable)
	}
	h.r.after(on, what, err)
	return f, created, err
}

// createFlow starts a flow that asks for a follow-up flow, loses the
// answer to the plugin's first CreateFlow, and checks that the plugin
// asked again with the same key and got the same flow (created false),
// that each key has one flow, and that the plugin acknowledged each
// created flow's flow.started. A plugin that creates no flow passes with
// nothing to check.
func (h *harness) createFlow(ctx context.Context) Result {
	const name = "create-flow"
	f, err := h.eng.CreateFlow(engine.CreateFlowInput{ControllerID: h.name, OwnerKey: "plugins-test", Goal: "create a flow",
		Origin: "flowgate plugins test", State: json.RawMessage(fmt.Sprintf(`{"follow_up":%q}`, FollowUpGoal))})
	if err != nil {
		return Result{Case: name, Detail: err.Error()}
	}
	h.rec.loseNextCreate(f.ID)
	if _, err := h.drive(ctx, f.ID); err != nil {
		return h.outcome(name, f, err, "")
	}
	calls := h.rec.createCalls()
	if len(calls) == 0 {
		return h.outcome(name, f, nil, "the plugin created no flow for a flow that asked for a follow-up: nothing to check")
	}
	return h.outcome(name, f, h.checkCreates(ctx, calls),
		"the plugin asked again with the same key after a lost answer and got the same flow, one flow per key, whose flow.started it acknowledged")
}

// checkCreates checks the CreateFlow calls of the create-flow case.
func (h *harness) checkCreates(ctx context.Context, calls []createCall) error {
	byKey := map[string]string{}
	for _, c := range calls {
		if id, ok := byKey[c.key]; ok && id != c.flowID {
			return fmt.Errorf("key %q named flow %s, then flow %s", c.key, id, c.flowID)
		}
		byKey[c.key] = c.flowID
	}
	lost := calls[0]
	retried := false
	for _, c := range calls[1:] {
		retried = retried || (c.key == lost.key && !c.created)
	}
	if !retried {
		return fmt.Errorf("the answer to CreateFlow %q was lost (unavailable), and the plugin did not ask again with the same key: fail the event so that it comes again, and derive the key from what the flow is for", lost.key)
	}
	page, err := h.eng.ListFlows(engine.FlowFilter{ControllerID: h.name})
	if err != nil {
		return err
	}
	perKey := map[string]int{}
	for _, fl := range page.Flows {
		if fl.IdempotencyKey != "" {
			perKey[fl.IdempotencyKey]++
		}
	}
	for key, id := range byKey {
		if perKey[key] != 1 {
			return fmt.Errorf("key %q has %d flows; want 1", key, perKey[key])
		}
		if err := h.settle(ctx, id); err != nil {
			return fmt.Errorf("created flow %s: %w", id, err)
		}
		if !startedAcked(h.rec.events(id)) {
			return fmt.Errorf("the plugin never acknowledged flow.started of the flow it created, %s", id)
		}
	}
	return nil
}

// startedAcked reports whether evs holds a flow.started.
func startedAcked(evs []sdk.Event) bool {
	for _, ev := range evs {
		if ev.Type == sdk.EventFlowStarted {
			return true
		}
	}
	return false
}
