package pluginhost_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// lockedBuffer is a log sink the deliverer's goroutines may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// An event of a flow that is already cancelled, which its controller keeps
// failing, is parked without touching the flow, and the log says so: not
// "flow blocked", which would send an operator to unblock a flow that has
// ended.
func TestParkedEventOfAnEndedFlowIsNotLoggedAsBlocking(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	_, err = eng.CancelFlow(f.ID, "")
	require.NoError(t, err)
	cancelled, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, cancelled.Status)

	var logged lockedBuffer
	failing := &recorder{fn: func(context.Context, sdk.Event) error { return errors.New("controller crashed") }}
	d := pluginhost.NewDeliverer(eng, func(string) (pluginhost.Handler, error) { return failing, nil }, pluginhost.DeliveryConfig{
		MaxFailures: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond, Poll: 5 * time.Millisecond,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logged, Level: hclog.Warn}),
	})
	require.NoError(t, d.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, d.Stop(context.Background())) })

	polltest.Until(t, "the event parked", func() bool {
		evs, err := eng.Events(f.ID)
		require.NoError(t, err)
		return len(evs) > 0 && evs[0].Parked
	})
	polltest.Until(t, "the parking logged", func() bool { return strings.Contains(logged.String(), "parked") })
	require.NotContains(t, logged.String(), "flow blocked")
	require.Contains(t, logged.String(), "its flow had already ended")
	require.Contains(t, logged.String(), "status=cancelled")
	after, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, cancelled.Revision, after.Revision, "the ended flow is left as it was")
}
