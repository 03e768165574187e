package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
)

// countingClient counts the Status calls made through it.
type countingClient struct {
	api.Client
	status atomic.Int32
}

func (c *countingClient) Status(ctx context.Context) (api.GatewayStatus, error) {
	c.status.Add(1)
	return c.Client.Status(ctx)
}

// Waiting for a round's tasks must not load the gateway being measured:
// it counts every task (Status, which also reads every active flow: 3 ms
// a call with 1,000 tasks queued) only once no task is queued or running,
// not on every look.
func TestWaitTasksCountsOnceAtTheEnd(t *testing.T) {
	t.Parallel()
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	r := &run{cfg: Config{Dir: t.TempDir(), Self: os.Args[0]}.WithDefaults()}
	home := filepath.Join(r.cfg.Dir, "home")
	g, err := r.newGateway(home, 3)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, g.Start(ctx))
	defer func() { require.NoError(t, g.Stop(ctx)) }()

	c := &countingClient{Client: g.Client()}
	require.NoError(t, submit(ctx, c, 3, 3, "wait", []string{sleep, "0.3"}))
	require.NoError(t, waitTasks(ctx, c, 3, 5*time.Millisecond))
	require.Equal(t, int32(1), c.status.Load(), "Status calls while waiting for 3 tasks of 0.3 s")
}
