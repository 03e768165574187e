package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// watcher declares a Watch that appends its process id to the file
// ledger, creates one flow keyed "from-watch", and fails on its first
// call ever (the ledger had no line), else runs until it is stopped. It
// leaves its flow alone.
type watcher struct {
	stepper
	ledger string
}

func (w watcher) Info(ctx context.Context) (sdk.Info, error) {
	info, err := w.stepper.Info(ctx)
	info.Watch = true
	return info, err
}

// HandleEvent acknowledges every event: the flow stays as Watch made it.
func (watcher) HandleEvent(context.Context, sdk.Host, sdk.Event) error { return nil }

func (w watcher) Watch(ctx context.Context, h sdk.Host) error {
	before, _ := os.ReadFile(w.ledger)
	out, err := os.OpenFile(w.ledger, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, os.Getpid())
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if _, _, err := h.CreateFlow(ctx, sdk.FlowRequest{IdempotencyKey: "from-watch", Goal: "made by watch", OwnerKey: "me"}); err != nil {
		return err
	}
	if len(before) == 0 {
		return errors.New("the first watch fails")
	}
	<-ctx.Done()
	return nil
}

// watches reads the process ids the watcher's ledger lists, in order.
func watches(t *testing.T, ledger string) []int {
	t.Helper()
	b, err := os.ReadFile(ledger)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var pids []int
	for _, l := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(l)
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	return pids
}

// A plugin that declares Watch has it called once its instance is set
// up; a Watch that fails restarts the plugin, and a plugin killed with
// SIGKILL has Watch called again in its new process. The flows it creates
// with one key stay one flow.
func TestWatchIsCalledAgainOnEveryNewInstance(t *testing.T) {
	t.Parallel()
	ledger := filepath.Join(t.TempDir(), "watches")
	_, c := startTestGateway(t, 10, testPlugin("watcher", "watcher", map[string]string{"FLOWGATE_TEST_WATCHES": ledger}))

	polltest.Until(t, "the failed watch's restart to watch again", func() bool { return len(watches(t, ledger)) == 2 })
	pids := watches(t, ledger)
	require.NotEqual(t, pids[0], pids[1], "the watch that failed was called again in a new process")
	st := pluginStatus(t, c, "watcher")
	require.Equal(t, pids[1], st.PID)
	require.Equal(t, "running", st.Watch, "plugins list says the watch runs")

	require.NoError(t, syscall.Kill(pids[1], syscall.SIGKILL))
	polltest.Until(t, "the killed plugin's new instance to watch", func() bool { return len(watches(t, ledger)) == 3 })
	pids = watches(t, ledger)
	require.NotContains(t, pids[:2], pids[2])
	require.Len(t, watchedFlows(t, c), 1, "three watches made one flow with one key")
}

// watchedFlows lists the watcher's flows.
func watchedFlows(t *testing.T, c api.Client) []apitype.FlowView {
	t.Helper()
	page, err := c.ViewFlows(context.Background(), apitype.FlowFilter{ControllerID: "watcher"})
	require.NoError(t, err)
	return page.Flows
}
