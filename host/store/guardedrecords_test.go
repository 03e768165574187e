package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
)

// GuardedRecords counts only updates that found their record at the
// revision they expected, and refuses a record another writer moved.
func TestGuardedRecords(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	g, err := store.NewGuardedRecords(t.Context(), st, 4, []byte(`{"v":1}`))
	require.NoError(t, err)
	rate, err := g.Rate(t.Context(), 4, 50*time.Millisecond)
	require.NoError(t, err)
	require.Positive(t, rate)

	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("bench/record/0002", []byte(`{"v":2}`))
		return err
	}))
	_, err = g.Rate(t.Context(), 4, 50*time.Millisecond)
	require.ErrorContains(t, err, "bench/record/0002 is at revision")

	_, err = g.Rate(t.Context(), 5, time.Millisecond)
	require.ErrorContains(t, err, "5 writers for 4 records")
}
