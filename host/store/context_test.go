package store_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
)

// Every call that runs a transaction on a store takes the caller's
// context first, so that a request or a loop that stops stops its store
// calls (issue 32, item 4). What takes none says why here: a pure
// accessor, the calls of a transaction (bounded by the context of the
// View or Update that made it), or a bbolt handle's own maintenance of
// its local file, which bbolt cannot interrupt.
func TestStoreCallsTakeAContext(t *testing.T) {
	t.Parallel()
	exempt := map[string]string{
		"ReadTx.Get": "bounded by its transaction's context", "ReadTx.Scan": "bounded by its transaction's context",
		"Tx.Get": "bounded by its transaction's context", "Tx.Scan": "bounded by its transaction's context",
		"Tx.Put": "buffered or local: bounded by its transaction's context", "Tx.Delete": "buffered or local: bounded by its transaction's context",
		"Store.Close": "ends the store's own calls; io.Closer",
		"Bolt.Close":  "ends the store's own calls; io.Closer", "ReadOnly.Close": "ends the store's own calls; io.Closer", "Overlay.Close": "releases memory",
		"Bolt.Path": "accessor", "ReadOnly.Path": "accessor", "Bolt.WriteHealth": "accessor", "Bolt.Writer": "accessor: counters in memory", "Overlay.Seal": "accessor: sets a flag in memory",
		"Bolt.WriteTo": "io.WriterTo of the local file", "ReadOnly.WriteTo": "io.WriterTo of the local file",
		"Bolt.Check": "reads the local file, which bbolt cannot interrupt", "Bolt.PageProblems": "reads the local file, which bbolt cannot interrupt",
		"ReadOnly.PageProblems": "reads the local file, which bbolt cannot interrupt",
		"Bolt.Space":            "stats the local file", "ReadOnly.Space": "stats the local file",
	}
	types := []reflect.Type{
		reflect.TypeFor[store.Store](), reflect.TypeFor[store.ReadTx](), reflect.TypeFor[store.Tx](), reflect.TypeFor[store.Fencer](),
		reflect.TypeFor[*store.Bolt](), reflect.TypeFor[*store.ReadOnly](), reflect.TypeFor[*store.Overlay](),
	}
	checked := storetest.RequireContextFirst(t, types, exempt)
	for _, m := range []string{"Store.View", "Store.Update", "Fencer.UpdateFenced", "Bolt.View", "Bolt.Update", "Overlay.Update"} {
		require.True(t, checked[m], "%s takes a context", m)
	}
}
