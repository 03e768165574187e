package scheduler_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/scheduler"
)

// A scheduler whose records cannot be indexed does not start, says which
// part failed, and starts once the record is repaired; Start and Stop are
// idempotent.
func TestStartFailsOnADamagedJobAndRetries(t *testing.T) {
	t.Parallel()
	e := newLoopEnv(t, scheduler.Config{})
	put := func(v string) {
		require.NoError(t, e.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
			return tx.Put("cron/job/broken", []byte(v))
		}))
	}
	put("{not json")
	err := e.sched.Start(context.Background())
	require.ErrorContains(t, err, "scheduler: start: read cron/job/broken")
	require.NoError(t, e.sched.Stop(context.Background()), "a scheduler that did not start stops as a no-op")

	put(`{"id":"broken","name":"broken"}`)
	require.NoError(t, e.sched.Start(context.Background()))
	require.NoError(t, e.sched.Start(context.Background()), "starting a started scheduler does nothing")
	require.NoError(t, e.sched.Stop(context.Background()))
	require.NoError(t, e.sched.Stop(context.Background()))
}
