package sdktest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// testCreateFlow: CreateFlow makes a queued managed flow of the calling
// controller with what was asked and flow.started in its outbox; the same
// key returns the same flow with created false and queues nothing more;
// another key makes another flow; a key, goal and owner are required; a
// parent is recorded, and one that does not exist is not found.
func testCreateFlow(c *conformance) {
	mine := c.flow()
	req := sdk.FlowRequest{
		IdempotencyKey: "inbox/a.txt@1", Goal: "handle a.txt", OwnerKey: "inbox",
		State: json.RawMessage(`{"file":"a.txt"}`), Labels: map[string]string{"source": "inbox"}, ParentFlowID: mine.ID,
	}
	f, created, err := c.fx.Host.CreateFlow(c.ctx, req)
	c.ok(err, "CreateFlow")
	c.same(created, true, "created of a new key")
	c.same([]any{f.SyncMode, f.ControllerID, f.Status, f.Goal, f.OwnerKey, f.IdempotencyKey, f.ParentFlowID},
		[]any{sdk.SyncManaged, mine.ControllerID, sdk.FlowQueued, req.Goal, req.OwnerKey, req.IdempotencyKey, mine.ID}, "the created flow")
	c.sameJSON(f.State, `{"file":"a.txt"}`, "state")
	c.same(f.Labels, req.Labels, "labels")
	c.same(c.get(f.ID).Revision, f.Revision, "the revision read back")
	c.events(f.ID, "flow.started")

	again, created, err := c.fx.Host.CreateFlow(c.ctx, sdk.FlowRequest{IdempotencyKey: req.IdempotencyKey, Goal: "another goal", OwnerKey: "inbox"})
	c.ok(err, "CreateFlow with the same key")
	c.same(created, false, "created of a repeated key")
	c.same(again.ID, f.ID, "the flow of a repeated key")
	c.same(again.Goal, req.Goal, "the goal of the flow the key named first")
	c.events(f.ID, "flow.started")

	other, created, err := c.fx.Host.CreateFlow(c.ctx, sdk.FlowRequest{IdempotencyKey: "inbox/b.txt@1", Goal: "handle b.txt", OwnerKey: "inbox"})
	c.ok(err, "CreateFlow with another key")
	if !created || other.ID == f.ID {
		c.Fatalf("another key returned flow %s (created %v); want a new flow", other.ID, created)
	}

	for what, bad := range map[string]sdk.FlowRequest{
		"no idempotency key": {Goal: "g", OwnerKey: "o"},
		"no goal":            {IdempotencyKey: "k-goal", OwnerKey: "o"},
		"no owner":           {IdempotencyKey: "k-owner", Goal: "g"},
		"state not JSON":     {IdempotencyKey: "k-state", Goal: "g", OwnerKey: "o", State: json.RawMessage(`{`)},
	} {
		_, _, err := c.fx.Host.CreateFlow(c.ctx, bad)
		c.refused(err, sdk.ErrInvalid, "CreateFlow with "+what)
	}
	_, _, err = c.fx.Host.CreateFlow(c.ctx, sdk.FlowRequest{IdempotencyKey: "k-parent", Goal: "g", OwnerKey: "o", ParentFlowID: "no-such-flow"})
	c.refused(err, sdk.ErrNotFound, "CreateFlow under a parent that does not exist")
}

// testCreateFlowCap: with MaxActiveFlows active flows, CreateFlow is
// refused with sdk.ErrResourceExhausted naming the cap and creates
// nothing (the refused key is not taken); once one of them ends, the same
// call creates the flow. A repeated key still answers at the cap.
func testCreateFlowCap(c *conformance) {
	limit := c.fx.MaxActiveFlows
	if limit <= 0 {
		c.Fatalf("HostFixture.MaxActiveFlows is %d; set it to the cap the Host applies", limit)
	}
	var flows []*sdk.Flow
	for i := range limit {
		f, _, err := c.fx.Host.CreateFlow(c.ctx, sdk.FlowRequest{IdempotencyKey: fmt.Sprintf("cap-%d", i), Goal: "fill the cap", OwnerKey: "cap"})
		c.ok(err, "CreateFlow under the cap")
		flows = append(flows, f)
	}
	over := sdk.FlowRequest{IdempotencyKey: "cap-over", Goal: "one too many", OwnerKey: "cap"}
	_, _, err := c.fx.Host.CreateFlow(c.ctx, over)
	c.refused(err, sdk.ErrResourceExhausted, "CreateFlow past the cap")
	if !strings.Contains(err.Error(), fmt.Sprint(limit)) {
		c.Fatalf("the refusal %q does not name the cap %d", err, limit)
	}
	f, created, err := c.fx.Host.CreateFlow(c.ctx, sdk.FlowRequest{IdempotencyKey: "cap-0", Goal: "fill the cap", OwnerKey: "cap"})
	c.ok(err, "CreateFlow with a key already used, at the cap")
	c.same([]any{f.ID, created}, []any{flows[0].ID, false}, "the flow of the repeated key")

	_, err = c.fx.Host.Finish(c.ctx, flows[0].ID, flows[0].Revision, sdk.EndRequest{})
	c.ok(err, "Finish one flow")
	f, created, err = c.fx.Host.CreateFlow(c.ctx, over)
	c.ok(err, "CreateFlow once a flow ended")
	c.same(created, true, "created of the key refused at the cap")
	c.events(f.ID, "flow.started")
}
