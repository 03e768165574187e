package sdktest

import (
	"encoding/json"

	"github.com/flowgate/flowgate/sdk"
)

// continuable makes a flow whose plan has a (succeeded) then b (never
// ran) and ends it partial.
func (c *conformance) continuable() *sdk.Flow {
	c.Helper()
	f, err := c.fx.CreateFlow("conformance", json.RawMessage(`{"plan":{"nodes":[{"id":"a","status":"succeeded"},{"id":"b","depends_on":["a"]}]}}`))
	c.ok(err, "create a flow with a plan")
	ended, err := c.fx.Host.Fail(c.ctx, f.ID, f.Revision, sdk.EndRequest{Partial: true, BlockedSummary: "b did not run"})
	c.ok(err, "Fail partial")
	c.same(ended.Status, sdk.FlowPartial, "status after Fail with Partial")
	return ended
}

// testContinue checks the one continuation of a chain: refused while the
// source runs and on a stale revision, accepted once with its receipt and
// flow.started, the same successor for the identical request, and a
// refusal for a different one.
func testContinue(c *conformance) {
	running := c.flow()
	_, _, err := c.fx.Host.Continue(c.ctx, running.ID, sdk.ContinueRequest{ExpectedRevision: running.Revision, Reason: "retry"})
	c.refused(err, sdk.ErrInvalid, "Continue a queued flow")

	src := c.continuable()
	_, _, err = c.fx.Host.Continue(c.ctx, src.ID, sdk.ContinueRequest{ExpectedRevision: src.Revision - 1, Reason: "retry"})
	c.refused(err, sdk.ErrRevisionConflict, "Continue at a stale revision")

	req := sdk.ContinueRequest{ExpectedRevision: src.Revision, Reason: "b needs its turn"}
	succ, created, err := c.fx.Host.Continue(c.ctx, src.ID, req)
	c.ok(err, "Continue")
	c.same(created, true, "created by the first Continue")
	c.same(succ.Status, sdk.FlowQueued, "successor status")
	c.same([]string{succ.ChainID, succ.SourceFlowID}, []string{src.Chain(), src.ID}, "successor chain and source")
	c.same(succ.SourceRevision, src.Revision, "successor's source revision")
	if succ.Continuation == nil {
		c.Fatalf("the successor carries no receipt: %+v", succ)
	}
	c.same([][]string{succ.Continuation.Reuse, succ.Continuation.Rerun}, [][]string{{"a"}, {"b"}}, "reused and rerun nodes")
	c.events(succ.ID, "flow.started")

	again, created, err := c.fx.Host.Continue(c.ctx, src.ID, req)
	c.ok(err, "Continue again, identically")
	c.same([]any{again.ID, created}, []any{succ.ID, false}, "the identical request's successor")

	req.Review = "another request"
	_, _, err = c.fx.Host.Continue(c.ctx, src.ID, req)
	c.refused(err, sdk.ErrInvalid, "a second, different continuation")
	_, _, err = c.fx.Host.Continue(c.ctx, succ.ID, sdk.ContinueRequest{ExpectedRevision: succ.Revision, Reason: "third run"})
	c.refused(err, sdk.ErrInvalid, "continuing a continuation")
	c.events(succ.ID, "flow.started")
}
