package engine_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// A stored value is one per controller, scope and key: a second store
// replaces it, other controllers, scopes and keys do not see it, and
// pruning the flows leaves it.
func TestStoredValueIsOnePerKeyAndOutlivesFlows(t *testing.T) {
	t.Parallel()
	eng, st, c := newClockEngine(t)
	_, err := eng.StoredValue("pipeline", "pipelines", "seen")
	require.ErrorIs(t, err, sdk.ErrNotFound, "nothing stored yet")

	require.NoError(t, eng.StoreValue("pipeline", "pipelines", "seen", []byte(`[1]`)))
	require.NoError(t, eng.StoreValue("pipeline", "pipelines", "seen", []byte(`[1,2]`)))
	got, err := eng.StoredValue("pipeline", "pipelines", "seen")
	require.NoError(t, err)
	require.Equal(t, `[1,2]`, string(got), "the last value stored")
	require.Len(t, keysUnder(t, st, "stored/"), 1)
	for _, other := range [][3]string{{"other", "pipelines", "seen"}, {"pipeline", "a/b", "seen"}, {"pipeline", "pipelines", "seen/x"}} {
		_, err := eng.StoredValue(other[0], other[1], other[2])
		require.ErrorIs(t, err, sdk.ErrNotFound, "%v", other)
	}
	require.NoError(t, eng.StoreValue("pipeline", "a/b", "seen", []byte(`"slash"`)))
	got, err = eng.StoredValue("pipeline", "a/b", "seen")
	require.NoError(t, err)
	require.Equal(t, `"slash"`, string(got))

	f := createFlow(t, eng)
	_, err = eng.Finish(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)
	_, err = eng.PruneFlow(f.ID, c.t)
	require.NoError(t, err)
	_, err = eng.GetFlow(f.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound, "the flow was pruned")
	got, err = eng.StoredValue("pipeline", "pipelines", "seen")
	require.NoError(t, err, "a stored value is no flow's")
	require.Equal(t, `[1,2]`, string(got))
}

// A value over one record, and an empty or overlong scope or key, are
// refused with sdk.ErrInvalid, and nothing is written.
func TestStoreValueRefusesWhatItCannotKeep(t *testing.T) {
	t.Parallel()
	eng, st, _ := newClockEngine(t)
	err := eng.StoreValue("pipeline", "s", "k", make([]byte, engine.MaxKept+1))
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "store a smaller value")
	for _, sk := range [][2]string{{"", "k"}, {"s", ""}, {strings.Repeat("s", engine.MaxStoredName+1), "k"}, {"s", strings.Repeat("k", engine.MaxStoredName+1)}} {
		err := eng.StoreValue("pipeline", sk[0], sk[1], []byte(`1`))
		require.ErrorIs(t, err, sdk.ErrInvalid, "%q", sk)
		_, err = eng.StoredValue("pipeline", sk[0], sk[1])
		require.ErrorIs(t, err, sdk.ErrInvalid, "%q", sk)
	}
	require.Empty(t, keysUnder(t, st, "stored/"))
	require.NoError(t, eng.StoreValue("pipeline", "s", "k", make([]byte, engine.MaxKept)), "a value of exactly the bound is stored")
}
