package store_test

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
)

// OnCommit hears of every Update, a failed one too, and of nothing else.
func TestOnCommitHearsEveryUpdate(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		took []time.Duration
	)
	s, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{OnCommit: func(d time.Duration) {
		mu.Lock()
		took = append(took, d)
		mu.Unlock()
	}})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("a", []byte("1")); return err }))
	require.Error(t, s.Update(t.Context(), func(store.Tx) error { return errors.New("refused") }))
	require.NoError(t, s.View(t.Context(), func(store.ReadTx) error { return nil }))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, took, 2, "one call per Update, none for View")
	for _, d := range took {
		require.GreaterOrEqual(t, d, time.Duration(0))
	}
}
