package pluginhost_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/store/fulldisk"
	"github.com/flowgate/flowgate/sdk"
)

// syncBuffer is a log sink that may be read while it is written.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), "\n")
}

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
	logs := &syncBuffer{}
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

	eventually(t, "the store reports the disk full", func() bool { return st.WriteHealth().DiskFull })
	time.Sleep(3 * time.Second) // the window over which commits and lines are counted
	attempts := st.WriteHealth().Attempts - before
	t.Logf("on the full disk: %d commits tried, %d log lines, %d deliveries", attempts, logs.lines(), len(rec.events()))
	require.LessOrEqual(t, attempts, int64(100), "commits tried on a full disk in the window")
	require.LessOrEqual(t, logs.lines(), 20, "log lines on a full disk in the window:\n%s", logs.buf.String())

	filler.Free(t)
	healthy.Store(true)
	eventually(t, "every event acknowledged once space returned", func() bool {
		pending, err := eng.PendingEvents()
		require.NoError(t, err)
		return len(pending) == 0
	})
	require.True(t, st.WriteHealth().Writable)
}
