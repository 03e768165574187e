package sdktest

import (
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// testStoreValue: a stored value reads back under its scope and key, a
// second store replaces it, other scopes and keys do not see it, and a
// value over sdk.MaxKeptValue or an empty or overlong name is refused
// and nothing is stored. The scope is new to each run (it names a new
// flow's id), as stored values outlive flows.
func testStoreValue(c *conformance) {
	scope, key := "conformance-"+c.flow().ID, "seen"
	_, err := c.fx.Host.StoredValue(c.ctx, scope, key)
	c.refused(err, sdk.ErrNotFound, "StoredValue before any StoreValue")
	c.ok(c.fx.Host.StoreValue(c.ctx, scope, key, []byte(`[1]`)), "StoreValue")
	c.ok(c.fx.Host.StoreValue(c.ctx, scope, key, []byte(`[1,2]`)), "StoreValue again")
	got, err := c.fx.Host.StoredValue(c.ctx, scope, key)
	c.ok(err, "StoredValue")
	c.same(string(got), `[1,2]`, "the stored value, the last one stored")
	_, err = c.fx.Host.StoredValue(c.ctx, scope, key+"/other")
	c.refused(err, sdk.ErrNotFound, "StoredValue of another key")
	_, err = c.fx.Host.StoredValue(c.ctx, scope+"/other", key)
	c.refused(err, sdk.ErrNotFound, "StoredValue of another scope")

	err = c.fx.Host.StoreValue(c.ctx, scope, "big", make([]byte, sdk.MaxKeptValue+1))
	c.refused(err, sdk.ErrInvalid, "StoreValue over sdk.MaxKeptValue")
	_, err = c.fx.Host.StoredValue(c.ctx, scope, "big")
	c.refused(err, sdk.ErrNotFound, "StoredValue of the refused value")
	err = c.fx.Host.StoreValue(c.ctx, scope, "", []byte(`1`))
	c.refused(err, sdk.ErrInvalid, "StoreValue under an empty key")
	err = c.fx.Host.StoreValue(c.ctx, strings.Repeat("s", sdk.MaxStoredName+1), key, []byte(`1`))
	c.refused(err, sdk.ErrInvalid, "StoreValue under a scope over sdk.MaxStoredName")
}
