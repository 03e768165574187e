package sdktest

import (
	"bytes"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// testKeepValue: a kept value reads back under the digest KeepValue
// returned, keeping it again returns the same digest, a value the flow
// does not keep is not found, a digest that is not one is refused, a
// value over sdk.MaxKeptValue is refused
// and nothing is kept, and KeepValue writes no revision.
func testKeepValue(c *conformance) {
	f := c.flow()
	v := bytes.Repeat([]byte("a value too large for a state "), 1000)
	sum, err := c.fx.Host.KeepValue(c.ctx, f.ID, v)
	c.ok(err, "KeepValue")
	c.same(len(sum), 64, "the length of the digest")
	again, err := c.fx.Host.KeepValue(c.ctx, f.ID, v)
	c.ok(err, "KeepValue again")
	c.same(again, sum, "the digest of the same value")
	got, err := c.fx.Host.KeptValue(c.ctx, f.ID, sum)
	c.ok(err, "KeptValue")
	c.same(string(got), string(v), "the kept value")
	c.same(c.get(f.ID).Revision, f.Revision, "the revision after KeepValue")

	other := c.flow()
	_, err = c.fx.Host.KeptValue(c.ctx, other.ID, sum)
	c.refused(err, sdk.ErrNotFound, "KeptValue of a value another flow keeps")
	big := make([]byte, sdk.MaxKeptValue+1)
	_, err = c.fx.Host.KeepValue(c.ctx, f.ID, big)
	c.refused(err, sdk.ErrInvalid, "KeepValue over sdk.MaxKeptValue")
	_, err = c.fx.Host.KeptValue(c.ctx, f.ID, sha256Hex(big))
	c.refused(err, sdk.ErrNotFound, "KeptValue of the refused value")
	_, err = c.fx.Host.KeptValue(c.ctx, f.ID, strings.ToUpper(sum))
	c.refused(err, sdk.ErrInvalid, "KeptValue of a digest that is not lowercase hex")
}
