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

// checkReport runs flowgate check --json and returns its exit code and
// report.
func checkReport(t *testing.T, dir string) (int, api.CheckReport) {
	t.Helper()
	code, out, errOut := run(t, dir, "check", "--json")
	var rep api.CheckReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "stdout %q, stderr %q", out, errOut)
	return code, rep
}

// damageIndexes injects two index faults into the store of dir, which no
// process may hold: an orphan entry (for a flow that does not exist) and
// a missing one (a real flow's owner entry, deleted). It returns their
// keys.
func damageIndexes(t *testing.T, dir string) (orphan, missing string) {
	t.Helper()
	var f *sdk.Flow
	seed(t, dir, func(eng *engine.Engine) {
		var err error
		f, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "me", ControllerID: "ctl", Goal: "damaged"})
		require.NoError(t, err)
	})
	// An owner entry, not a status one: an orphan status entry also
	// breaks the gateway's status counts, which every client probes first.
	orphan = "idx/flow/owner/ghost/no-such-flow"
	missing = "idx/flow/owner/me/" + f.ID
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Put(orphan, nil); err != nil {
			return err
		}
		return tx.Delete(missing)
	}))
	return orphan, missing
}

func TestCheckHealthyStore(t *testing.T) {
	t.Parallel()
	for _, m := range cronHomes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := seededHome(t, m.gateway, func(eng *engine.Engine) {
				_, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
				require.NoError(t, err)
				_, _, err = eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Label: "detached", IdempotencyKey: "k"})
				require.NoError(t, err)
			})
			code, out, errOut := run(t, dir, "check")
			require.Equal(t, 0, code, "%s%s", out, errOut)
			require.Equal(t, "Store: "+filepath.Join(dir, home.DBFile)+"\nPages: ok\nIndexes: ok\nNo problems found.\n", out)
			require.Empty(t, errOut)

			code, rep := checkReport(t, dir)
			require.Equal(t, 0, code)
			require.True(t, rep.Clean())
			require.Equal(t, []api.CheckProblem{}, rep.Problems)
		})
	}
}

func TestCheckFindsIndexDamage(t *testing.T) {
	t.Parallel()
	for _, m := range cronHomes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := shortHome(t)
			orphan, missing := damageIndexes(t, dir)
			if m.gateway {
				startGateway(t, dir)
			}
			code, out, errOut := run(t, dir, "check")
			require.Equal(t, 1, code, errOut)
			for _, want := range []string{"Pages: ok", "Indexes: 2 problem(s)", "orphan", orphan, "missing", missing, api.RepairMaintenance} {
				require.Contains(t, out, want, errOut)
			}
			require.Contains(t, errOut, "check found 2 problem(s)")
			require.Contains(t, errOut, "2 repairable with 'flowgate tasks maintenance --apply', 0 not")

			code, rep := checkReport(t, dir)
			require.Equal(t, 1, code)
			require.True(t, rep.IndexesChecked)
			got := map[string]string{}
			for _, p := range rep.Problems {
				got[p.Key] = p.Kind
				require.True(t, p.Repairable, "%+v", p)
			}
			require.Equal(t, map[string]string{orphan: engine.IndexOrphan, missing: engine.IndexMissing}, got)
		})
	}
}

func TestCheckReportsPageDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed(t, dir, func(eng *engine.Engine) {
		for range 20 {
			_, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
			require.NoError(t, err)
		}
	})
	damaged := t.TempDir()
	storetest.CorruptLeafCopy(t, filepath.Join(dir, home.DBFile), filepath.Join(damaged, home.DBFile))
	before, err := os.ReadFile(filepath.Join(damaged, home.DBFile))
	require.NoError(t, err)

	code, out, errOut := run(t, damaged, "check")
	require.Equal(t, 1, code)
	for _, want := range []string{"Pages: 1 problem(s)", "Indexes: not checked", "page", api.RepairRestore, "unexpected type"} {
		require.Contains(t, out, want)
	}
	require.Contains(t, errOut, "0 repairable")

	code, rep := checkReport(t, damaged)
	require.Equal(t, 1, code)
	require.True(t, rep.PagesChecked)
	require.False(t, rep.IndexesChecked)
	require.Equal(t, api.ProblemPage, rep.Problems[0].Kind)
	require.False(t, rep.Problems[0].Repairable)
	after, err := os.ReadFile(filepath.Join(damaged, home.DBFile))
	require.NoError(t, err)
	require.Equal(t, before, after, "check never writes to a damaged store")

	// Meta pages damaged past opening: still a finding, not a failure to run.
	require.NoError(t, os.WriteFile(filepath.Join(damaged, home.DBFile), []byte("not a store"), 0o600))
	code, rep = checkReport(t, damaged)
	require.Equal(t, 1, code)
	require.False(t, rep.PagesChecked)
	require.Equal(t, api.ProblemPage, rep.Problems[0].Kind)
	require.Contains(t, rep.Problems[0].Detail, "restore it from a backup")
}

func TestCheckWithoutStore(t *testing.T) {
	t.Parallel()
	code, _, errOut := run(t, t.TempDir(), "check")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "nothing to check")
}

// check --salvage copies what can be read into a new store and lists what
// was lost; the damaged file is left as it was, and the new store checks
// clean of page damage.
func TestCheckSalvage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed(t, dir, func(eng *engine.Engine) {
		for range 40 {
			_, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
			require.NoError(t, err)
		}
	})
	damaged := t.TempDir()
	storetest.CorruptLeafCopy(t, filepath.Join(dir, home.DBFile), filepath.Join(damaged, home.DBFile))
	before, err := os.ReadFile(filepath.Join(damaged, home.DBFile))
	require.NoError(t, err)

	out := filepath.Join(t.TempDir(), "salvaged.db")
	code, stdout, errOut := run(t, damaged, "check", "--salvage", out)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"Salvaged: " + out, "Copied: ", "Lost: 1 damaged page(s)", "move flowgate.db aside"} {
		require.Contains(t, stdout, want)
	}
	var res api.SalvageResult
	_, js, _ := run(t, damaged, "check", "--json", "--salvage", filepath.Join(t.TempDir(), "again.db"))
	require.NoError(t, json.Unmarshal([]byte(js), &res))
	require.NotEmpty(t, res.Lost)
	missingFlows := 0
	for _, k := range res.Missing {
		if strings.HasPrefix(k, "flow/") {
			missingFlows++
		}
	}
	// A flow has index entries under several prefixes, far apart in the
	// key order: some survive the one damaged leaf to name each lost flow.
	require.Equal(t, 40-res.Copied["flow"], missingFlows, "every lost flow is named: %v", res.Missing)
	after, err := os.ReadFile(filepath.Join(damaged, home.DBFile))
	require.NoError(t, err)
	require.Equal(t, before, after, "salvage never writes to the damaged store")

	code, _, errOut = run(t, damaged, "check", "--salvage", out)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "already exists")

	restored := t.TempDir()
	require.NoError(t, os.Rename(out, filepath.Join(restored, home.DBFile)))
	_, rep := checkReport(t, restored)
	require.True(t, rep.PagesChecked)
	require.True(t, rep.IndexesChecked, "the salvaged store has sound pages")
}

// A zero-length store file is damaged: every command says so and exits 1,
// and none replaces it with an empty store.
func TestEmptyStoreFileIsDamaged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, home.DBFile)
	require.NoError(t, os.WriteFile(db, nil, 0o600))
	for _, args := range [][]string{{"tasks", "flow", "list"}, {"tasks", "flow", "create", "--controller", "c", "--goal", "g"}} {
		code, _, errOut := run(t, dir, args...)
		require.Equal(t, 1, code, "%v", args)
		require.Contains(t, errOut, "empty (0 bytes)")
		require.Contains(t, errOut, "flowgate check --salvage")
	}
	code, rep := checkReport(t, dir)
	require.Equal(t, 1, code)
	require.Contains(t, rep.Problems[0].Detail, "empty (0 bytes)")
	info, err := os.Stat(db)
	require.NoError(t, err)
	require.Zero(t, info.Size(), "the empty file is left as it was")
}
