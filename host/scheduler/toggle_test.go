package scheduler_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
)

// legacyJob is a job as the code before LastToggle stored it, with its
// name and due index entries.
var legacyJob = map[string]string{
	"cron/job/0123456789ab": `{"id":"0123456789ab","name":"legacy","enabled":true,` +
		`"schedule":{"kind":"every","every":"1h0m0s","anchor":"2026-06-01T12:00:00Z"},` +
		`"payload":{"kind":"command","command":"true"},"session":"isolated","overlap":"skip",` +
		`"delivery":{"kind":"none"},"created_at":"2026-06-01T12:00:00Z","updated_at":"2026-06-01T12:00:00Z",` +
		`"state":{"next_run":"2026-06-01T13:00:00Z"}}`,
	"cron/name/legacy":                           "0123456789ab",
	"cron/due/01780318800000000000/0123456789ab": "",
}

// A job stored before jobs kept who enabled or disabled them loads with
// no LastToggle, lists, and records one when it is next disabled.
func TestJobStoredBeforeLastToggleLoads(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "jobs.db"), store.Options{Owner: t.Name()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	require.NoError(t, eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		for k, v := range legacyJob {
			if err := tx.Put(k, []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}))
	c := &jobClock{t: jt0}
	js := scheduler.NewJobs(eng, scheduler.JobsConfig{Now: c.now})

	j, err := js.Get("legacy")
	require.NoError(t, err)
	require.True(t, j.Enabled)
	require.Nil(t, j.LastToggle)
	list, err := js.List(true)
	require.NoError(t, err)
	require.Len(t, list, 1)

	off, err := js.SetEnabled("legacy", false, "alice")
	require.NoError(t, err)
	require.Equal(t, &scheduler.Toggle{Enabled: false, By: "alice", At: jt0}, off.LastToggle)
	again, err := js.Get(j.ID)
	require.NoError(t, err)
	require.Equal(t, off, again)
}
