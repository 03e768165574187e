package sdktest

import (
	"github.com/flowgate/flowgate/sdk"
)

// testStages: with no plugin providing stages, ListStages answers an
// empty list, and RunStage of any stage is refused with sdk.ErrNotFound
// for a flow that exists and for one that does not, writing nothing.
func testStages(c *conformance) {
	f := c.flow()
	st, err := c.fx.Host.ListStages(c.ctx)
	c.ok(err, "ListStages")
	c.same(len(st), 0, "the stages listed with no plugin providing any")
	call := sdk.StageCall{FlowID: f.ID, Key: f.ID + ":s", Name: "llm.invoke", Args: []byte(`{}`), Items: []byte(`[]`)}
	_, err = c.fx.Host.RunStage(c.ctx, call)
	c.refused(err, sdk.ErrNotFound, "RunStage of a stage nobody provides")
	call.FlowID = "no-such-flow"
	_, err = c.fx.Host.RunStage(c.ctx, call)
	c.refused(err, sdk.ErrNotFound, "RunStage for a flow that does not exist")
	c.same(c.get(f.ID).Revision, f.Revision, "the revision after RunStage")
}
