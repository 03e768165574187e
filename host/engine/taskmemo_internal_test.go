package engine

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The memo of decoded task records is bounded by the bytes they came
// from, not only by their count: a record holds up to 256 KiB of output,
// so a memo of 1,024 such records would hold hundreds of MiB. A record
// over memoRecordBytes is never kept; smaller ones are kept up to
// memoBytes in all.
func TestTaskMemoIsBoundedByBytes(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "memo.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	put := func(key string, stdoutBytes int) {
		task := stored.Task{Task: sdk.Task{ID: key, FlowID: "f", OwnerKey: "o", Runtime: "cli", Status: sdk.TaskSucceeded,
			Result: &sdk.Result{Stdout: strings.Repeat("x", stdoutBytes)}}}
		b, err := json.Marshal(task)
		require.NoError(t, err)
		require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
			_, err := tx.Put(key, b)
			return err
		}))
	}
	m := &taskMemo{}
	read := func(key string) {
		require.NoError(t, st.View(t.Context(), func(tx store.ReadTx) error {
			task, err := m.get(tx, key)
			if err == nil && task.ID != key {
				err = fmt.Errorf("read %s, got %s", key, task.ID)
			}
			return err
		}))
	}

	put("big", memoRecordBytes+1)
	read("big")
	require.Empty(t, m.m, "a record over memoRecordBytes is decoded, not kept")

	n := 2*memoBytes/(memoRecordBytes/2) + 1
	for i := range n {
		key := fmt.Sprintf("t%04d", i)
		put(key, memoRecordBytes/2)
		read(key)
		require.LessOrEqual(t, m.bytes, memoBytes, "after %d records", i+1)
		total := 0
		for _, kept := range m.m {
			total += len(kept.raw)
		}
		require.Equal(t, total, m.bytes, "the count of kept bytes is exact")
	}
	require.NotEmpty(t, m.m, "records under the bounds are kept")
}
