package pluginhost_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/store"
)

// part is the lifecycle every long-running part of the gateway has.
type part interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Start and Stop are idempotent, Stop before Start does nothing, and a
// stopped part starts again.
func TestStartStopIdempotent(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	sup, err := pluginhost.NewSupervisor(eng, pluginhost.SupervisorConfig{Self: "/nonexistent/flowgate"})
	require.NoError(t, err)
	del := pluginhost.NewDeliverer(eng, sup.Handler, pluginhost.DeliveryConfig{})

	for name, p := range map[string]part{"supervisor": sup, "deliverer": del} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, p.Stop(ctx), "stop before start")
			for range 2 {
				require.NoError(t, p.Start(ctx))
				require.NoError(t, p.Start(ctx), "start when started")
				require.NoError(t, p.Stop(ctx))
				require.NoError(t, p.Stop(ctx), "stop when stopped")
			}
		})
	}
}
