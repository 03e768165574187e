package sdktest

import (
	"encoding/json"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// testWakeAt: a wake fires once per key when it is due, as a flow.woken
// event carrying its key and time; a key asked for again keeps its first
// wake; a wake not due stays; WakeAt writes no revision, and refuses an
// empty key and an ended flow.
func testWakeAt(c *conformance) {
	f := c.flow()
	past := time.Now().Add(-time.Second).UTC().Truncate(time.Millisecond)
	c.ok(c.fx.Host.WakeAt(c.ctx, f.ID, past, "soon"), "WakeAt soon")
	c.ok(c.fx.Host.WakeAt(c.ctx, f.ID, past.Add(-time.Minute), "soon"), "WakeAt soon again")
	c.ok(c.fx.Host.WakeAt(c.ctx, f.ID, time.Now().Add(time.Hour), "later"), "WakeAt later")
	c.refused(c.fx.Host.WakeAt(c.ctx, f.ID, past, ""), sdk.ErrInvalid, "WakeAt with no key")
	c.same(c.get(f.ID).Revision, f.Revision, "the revision after WakeAt")

	c.ok(c.fx.FireWakes(), "fire the due wakes")
	c.events(f.ID, "flow.started", "flow.woken")
	evs, err := c.fx.Events(f.ID)
	c.ok(err, "read the outbox")
	var woken sdk.Woken
	c.ok(json.Unmarshal(evs[1].Data, &woken), "decode flow.woken's data")
	c.same(woken.Key, "soon", "the woken key")
	if !woken.At.Equal(past) {
		c.Fatalf("the woken time is %s, want the first WakeAt's %s", woken.At, past)
	}

	c.ok(c.fx.Host.WakeAt(c.ctx, f.ID, past, "soon"), "WakeAt soon after it fired")
	c.ok(c.fx.FireWakes(), "fire the due wakes again")
	c.events(f.ID, "flow.started", "flow.woken")

	_, err = c.fx.Host.Finish(c.ctx, f.ID, f.Revision, sdk.EndRequest{})
	c.ok(err, "Finish")
	c.refused(c.fx.Host.WakeAt(c.ctx, f.ID, past, "late"), sdk.ErrTerminal, "WakeAt on an ended flow")
}
