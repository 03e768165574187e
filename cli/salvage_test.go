package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
	"github.com/flowgate/flowgate/sdk"
)

// A store cut to half its size keeps, in the half left, leaf pages that no
// page it still has names (the tree's upper pages are past the cut):
// check --salvage scans every page for them and copies their records, the
// newest copy of each, and says how many it found that way.
func TestCheckSalvageScansTheLeavesOfACutTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed(t, dir, func(eng *engine.Engine) {
		for i := range 1500 {
			task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
			require.NoError(t, err)
			if i%2 == 0 { // a second version, so that older copies lie on freed pages
				_, err = eng.StartTask(task.ID, engine.StartInput{})
				require.NoError(t, err)
			}
		}
	})
	db := filepath.Join(dir, home.DBFile)
	data, err := os.ReadFile(db)
	require.NoError(t, err)
	cut := int64(len(data) / 2)
	// The tasks whose record as last written lies whole in the first half.
	var want []string
	for _, k := range storetest.LeafKeys(t, db, cut) {
		if strings.HasPrefix(k, "task/") {
			want = append(want, k)
		}
	}
	require.Greater(t, len(want), 300, "half the file holds a good part of 1,500 tasks")
	original := readRecords(t, db, want)

	damaged := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(damaged, home.DBFile), data[:cut], 0o600))
	out := filepath.Join(t.TempDir(), "salvaged.db")
	code, stdout, errOut := run(t, damaged, "check", "--salvage", out)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "found by scanning")
	var res api.SalvageResult
	_, js, _ := run(t, damaged, "check", "--json", "--salvage", filepath.Join(t.TempDir(), "again.db"))
	require.NoError(t, json.Unmarshal([]byte(js), &res))
	require.Positive(t, res.Scanned["task"], stdout)
	require.Positive(t, res.ScannedPages)
	require.Equal(t, original, readRecords(t, out, want), "every task on an intact leaf page is copied, as last written")
}

// readRecords reads keys from the store file at path, by key.
func readRecords(t *testing.T, path string, keys []string) map[string]store.Item {
	t.Helper()
	st, err := store.OpenReadOnly(path, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	out := map[string]store.Item{}
	require.NoError(t, st.View(t.Context(), func(tx store.ReadTx) error {
		for _, k := range keys {
			it, err := tx.Get(k)
			if err != nil {
				return err
			}
			out[k] = it
		}
		return nil
	}))
	return out
}
