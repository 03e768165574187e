package plugintest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/plugintest"
	"github.com/flowgate/flowgate/host/plugintest/exampletest"
	"github.com/flowgate/flowgate/sdk"
)

// helperEnv makes the test binary serve a controller instead of running
// tests; its value names the controller.
const helperEnv = "FLOWGATE_PLUGINTEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "careless" {
		sdk.Serve(careless{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// careless is a controller that forgets events come more than once: each
// flow.started creates a task under a new idempotency key, and it
// finishes the flow on the first task.finished.
type careless struct{}

func (careless) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "careless", Version: "0.0.1", APIVersion: sdk.APIVersion}, nil
}

func (careless) Shutdown(context.Context) error { return nil }

func (careless) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	f, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil || f.Status.Terminal() {
		return err
	}
	switch ev.Type {
	case sdk.EventFlowStarted:
		key := fmt.Sprintf("%s:%d:%d", f.ID, ev.Seq, ev.Deliveries) // not stable across deliveries
		_, _, err = h.CreateTask(ctx, sdk.TaskRequest{FlowID: f.ID, IdempotencyKey: key, Spec: sdk.TaskSpec{Shell: "true"}})
	case sdk.EventTaskFinished:
		_, err = h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{})
	}
	return err
}

// report prints a run's report, for a failing test.
func report(rep plugintest.Report) string {
	var b strings.Builder
	for _, c := range rep.Cases {
		fmt.Fprintf(&b, "%s pass=%v: %s\n", c.Case, c.Pass, c.Detail)
		for _, d := range c.Did {
			fmt.Fprintf(&b, "    %s\n", d)
		}
	}
	return b.String()
}

// The Go example controller passes every case.
func TestGoExamplePasses(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "hello")
	out, err := exec.Command("go", "build", "-o", bin, "../../examples/controllers/hello").CombinedOutput()
	require.NoError(t, err, "build the hello example: %s", out)
	requirePasses(t, bin, "hello")
}

// The Python example passes every case (its setup: apt-get install
// python3-grpcio python3-protobuf).
func TestPythonExamplePasses(t *testing.T) {
	t.Parallel()
	exampletest.Require(t, "../../examples/controllers/two-step-py")
	requirePasses(t, "../../examples/controllers/two-step-py/plugin", "two-step-py")
}

// The TypeScript example passes every case (its setup: npm ci in its
// directory, which .ci/run does).
func TestTypeScriptExamplePasses(t *testing.T) {
	t.Parallel()
	dir := "../../examples/controllers/two-step-ts"
	exampletest.Require(t, dir)
	requirePasses(t, filepath.Join(dir, "plugin"), "two-step-ts")
}

// requirePasses runs the harness on the plugin at path, which must pass
// every case under the name want.
func requirePasses(t *testing.T, path, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := plugintest.Run(ctx, plugintest.Config{Path: path})
	require.NoError(t, err)
	require.True(t, rep.Passed(), report(rep))
	require.Equal(t, want, rep.Plugin)
	require.Len(t, rep.Cases, 6)
}

// A controller that is not idempotent fails the redelivery case, and the
// report says what it did.
func TestCarelessControllerFails(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := plugintest.Run(ctx, plugintest.Config{Path: os.Args[0], Args: []string{"-test.run=^$"},
		Env: map[string]string{helperEnv: "careless"}, Timeout: 20 * time.Second})
	require.NoError(t, err)
	require.False(t, rep.Passed())
	byCase := map[string]plugintest.Result{}
	for _, c := range rep.Cases {
		byCase[c.Case] = c
	}
	require.True(t, byCase["start"].Pass, report(rep))
	red := byCase["redelivery"]
	require.False(t, red.Pass, report(rep))
	require.Contains(t, red.Detail, "delivered again changed the flow: queued with 1 tasks before, queued with 2 tasks after", report(rep))
	require.Contains(t, strings.Join(red.Did, "\n"), "event 1 flow.started (delivery 2): acknowledged")
}

// A path that is no plugin fails start, and the rest is not run.
func TestNotAPlugin(t *testing.T) {
	t.Parallel()
	rep, err := plugintest.Run(context.Background(), plugintest.Config{Path: "/bin/true", Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.False(t, rep.Passed())
	require.Contains(t, rep.Cases[0].Detail, "no go-plugin handshake from /bin/true")
	require.Equal(t, "not run: the plugin did not start", rep.Cases[1].Detail)
}
