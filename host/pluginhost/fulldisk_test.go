package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store/fulldisk"
	"github.com/flowgate/flowgate/sdk"
)

// The red team's busy loop: 54 flows with an event each, on a full disk.
// The controller fails every event with a long error, and saving that
// failure needs space the disk no longer has. Delivery holds back instead
// of retrying at once, so over a window of a few seconds it tries a bounded
// number of commits and logs a bounded number of lines (counts, not
// timings: a slower machine only makes fewer). Once the filler is removed
// and the controller recovers, every event is acknowledged with no
// restart.
func TestDeliveryHoldsBackOnAFullDiskAndResumes(t *testing.T) {
	dir := fulldisk.Mount(t, 2<<20)
	logs := &fulldisk.Log{}
	var healthy atomic.Bool
	rec := &recorder{fn: func(context.Context, sdk.Event) error {
		if healthy.Load() {
			return nil
		}
		return errors.New("controller busy: " + strings.Repeat("x", 8<<10))
	}}
	eng, st, start := newDelivererAt(t, dir, func(string) (pluginhost.Handler, error) { return rec, nil },
		pluginhost.DeliveryConfig{
			Logger:      hclog.New(&hclog.LoggerOptions{Output: logs}),
			MaxFailures: 1000, Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
		})
	for i := range 54 {
		_, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: fmt.Sprint("flow ", i)})
		require.NoError(t, err)
	}
	filler := fulldisk.Fill(t, dir)
	before := st.WriteHealth().Attempts
	start()

	polltest.Until(t, "the store reports the disk full", func() bool { return st.WriteHealth().DiskFull })
	time.Sleep(3 * time.Second) // the window over which commits and lines are counted
	attempts := st.WriteHealth().Attempts - before
	t.Logf("on the full disk: %d commits tried, %d log lines, %d deliveries", attempts, logs.Lines(), len(rec.events()))
	require.LessOrEqual(t, attempts, int64(100), "commits tried on a full disk in the window")
	require.LessOrEqual(t, logs.Lines(), 20, "log lines on a full disk in the window:\n%s", logs.String())

	filler.Free(t)
	healthy.Store(true)
	polltest.Until(t, "every event acknowledged once space returned", func() bool {
		pending, err := eng.PendingEvents()
		require.NoError(t, err)
		return len(pending) == 0
	})
	require.True(t, st.WriteHealth().Writable)
}
