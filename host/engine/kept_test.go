package engine_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store/storetest"
	"github.com/flowgate/flowgate/sdk"
)

// A flow keeps a value under its digest and reads it back; keeping the
// same bytes again writes nothing; what the flow does not keep, a flow
// that does not exist and a digest that is not one are refused, each
// with its sentinel.
func TestKeepAndReadBack(t *testing.T) {
	t.Parallel()
	eng, st, _ := newClockEngine(t)
	f := createFlow(t, eng)
	v := bytes.Repeat([]byte("kept "), 20000)
	sum, err := eng.Keep(f.ID, v)
	require.NoError(t, err)
	require.Len(t, sum, 64)
	again, err := eng.Keep(f.ID, v)
	require.NoError(t, err)
	require.Equal(t, sum, again)
	require.Len(t, keysUnder(t, st, "kept/"+f.ID+"/"), 1)
	got, err := eng.Kept(f.ID, sum)
	require.NoError(t, err)
	require.Equal(t, v, got)

	other := createFlow(t, eng)
	_, err = eng.Kept(other.ID, sum)
	require.ErrorIs(t, err, sdk.ErrNotFound, "a value is kept for one flow")
	_, err = eng.Kept(f.ID, "abc")
	require.ErrorIs(t, err, sdk.ErrInvalid)
	_, err = eng.Keep("no-such-flow", v)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	require.Empty(t, keysUnder(t, st, "kept/no-such-flow/"))

	g, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, f.Revision, g.Revision, "keeping a value does not write the flow")
}

// A value over what one record (and one etcd transaction) holds is
// refused with a message that says what to do, and nothing is written.
func TestKeepRefusesAValueOverItsBound(t *testing.T) {
	t.Parallel()
	eng, st, _ := newClockEngine(t)
	f := createFlow(t, eng)
	_, err := eng.Keep(f.ID, make([]byte, engine.MaxKept+1))
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "write large data to a file")
	require.Empty(t, keysUnder(t, st, "kept/"))
	_, err = eng.Keep(f.ID, make([]byte, engine.MaxKept))
	require.NoError(t, err, "a value of exactly the bound is kept")
}

// A flow's kept values are deleted when it is pruned, also when there
// are more of them than one etcd transaction deletes; another flow's
// stay.
func TestPruneFlowTakesItsKeptValues(t *testing.T) {
	t.Parallel()
	eng, st, c := newClockEngine(t)
	f := createFlow(t, eng)
	other := createFlow(t, eng)
	const n = 150
	for i := range n {
		_, err := eng.Keep(f.ID, fmt.Appendf(nil, "value %d", i))
		require.NoError(t, err)
	}
	stay, err := eng.Keep(other.ID, []byte("stays"))
	require.NoError(t, err)
	require.Len(t, keysUnder(t, st, "kept/"+f.ID+"/"), n)
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	_, err = eng.Finish(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)

	_, err = eng.PruneFlow(f.ID, c.t)
	require.NoError(t, err)
	require.Zero(t, len(keysUnder(t, st, "kept/"+f.ID+"/")), "the flow's kept values are left")
	_, err = eng.Kept(other.ID, stay)
	require.NoError(t, err)
}

// A quarantined flow's kept values go with it, as its history does: no
// prune finds them once the flow record is gone.
func TestQuarantineTakesAFlowsKeptValues(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f := createFlow(t, eng)
	_, err = eng.Keep(f.ID, []byte("kept"))
	require.NoError(t, err)
	storetest.EditRecord(t, st, "flow/"+f.ID, map[string]any{"status": "done"})

	_, err = eng.Quarantine("flow/" + f.ID)
	require.NoError(t, err)
	require.Empty(t, keysUnder(t, st, "kept/"+f.ID+"/"), "the quarantined flow's kept values are left")
}
