package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
)

// One undecodable flow and one with status "done" never lock out the
// repair path: lists skip and report them, check and the audit name them,
// maintenance --apply quarantines them, check is then clean and lists the
// quarantine, and a backup keeps it.
func TestDamagedRecordsAreReportedAndQuarantined(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var healthy, done string
	seed(t, dir, func(eng *engine.Engine) {
		for _, id := range []*string{&healthy, &done} {
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
			require.NoError(t, err)
			*id = f.ID
		}
	})
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{})
	require.NoError(t, err)
	storetest.EditRecord(t, st, "flow/"+done, map[string]any{"status": "done"})
	storetest.PutRaw(t, st, "flow/zz-garbled", []byte("{not json"))
	require.NoError(t, st.Close())

	code, out, errOut := run(t, dir, "tasks", "flow", "list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, healthy)
	require.NotContains(t, out, done)
	require.Contains(t, errOut, "skipped damaged record flow/zz-garbled: it does not decode")
	require.Contains(t, errOut, "skipped damaged record flow/"+done+`: status "done" is not a flow status`)

	code, out, errOut = run(t, dir, "tasks", "flow", "list", "--json")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut, "--json reports them in the listing")
	var l struct {
		Count   int
		Damaged []engine.DamagedRecord
	}
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Equal(t, 1, l.Count)
	require.Len(t, l.Damaged, 2)

	code, out, _ = run(t, dir, "tasks", "audit", "--fail-on", "error")
	require.Equal(t, 4, code, "the audit has errors")
	require.Contains(t, out, "record flow/zz-garbled is damaged")
	require.Contains(t, out, "record flow/"+done+" is damaged")

	code, out, _ = run(t, dir, "check")
	require.Equal(t, 1, code)
	require.Equal(t, 2, strings.Count(out, "\ndamaged "), out)

	code, out, errOut = run(t, dir, "tasks", "maintenance", "--apply")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "Damaged records: 2 (moved to the quarantine")

	code, out, errOut = run(t, dir, "check")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "No problems found.")
	require.Contains(t, out, "Quarantine: 2 record(s)")
	require.Contains(t, out, "flow/zz-garbled")

	path := filepath.Join(t.TempDir(), "backup.db")
	code, _, errOut = run(t, dir, "backup", path)
	require.Equal(t, 0, code, errOut)
	var kept []string
	for k := range requireSoundCopy(t, path) {
		if strings.HasPrefix(k, "quarantine/") {
			kept = append(kept, k)
		}
	}
	require.Len(t, kept, 2, "the backup keeps the quarantine")
}
