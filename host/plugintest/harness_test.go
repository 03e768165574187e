package plugintest_test

import (
	"context"
	"encoding/json"
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
	switch os.Getenv(helperEnv) {
	case "careless":
		sdk.Serve(careless{})
		os.Exit(0)
	case "follower":
		sdk.Serve(follower{stable: true})
		os.Exit(0)
	case "forgetful":
		sdk.Serve(follower{})
		os.Exit(0)
	case "watcher", "brittle":
		sdk.Serve(watcher{follower: follower{stable: true}, brittle: os.Getenv(helperEnv) == "brittle"})
		os.Exit(0)
	case "stager":
		sdk.Serve(stager{follower{stable: true}})
		os.Exit(0)
	case "declarer":
		sdk.Serve(declarer{follower{stable: true}})
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
	require.Len(t, rep.Cases, 9)
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

// follower creates a follow-up flow for a flow whose state asks for one
// ({"follow_up": goal}) and finishes the flow; it runs one task in any
// other flow. Its follow-up's key is stable across deliveries when
// stable is set, and names the delivery otherwise.
type follower struct{ stable bool }

func (follower) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "follower", Version: "0.0.1", APIVersion: sdk.APIVersion}, nil
}

func (follower) Shutdown(context.Context) error { return nil }

func (fl follower) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	f, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil || f.Status.Terminal() {
		return err
	}
	var state struct {
		FollowUp string `json:"follow_up"`
	}
	_ = json.Unmarshal(f.State, &state)
	switch {
	case state.FollowUp != "":
		key := f.ID + ":follow-up"
		if !fl.stable {
			key = fmt.Sprintf("%s:%d", key, ev.Deliveries)
		}
		if _, _, err := h.CreateFlow(ctx, sdk.FlowRequest{IdempotencyKey: key, Goal: state.FollowUp, OwnerKey: f.OwnerKey, ParentFlowID: f.ID}); err != nil {
			return err
		}
		_, err = h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{})
	case ev.Type == sdk.EventFlowStarted:
		_, _, err = h.CreateTask(ctx, sdk.TaskRequest{FlowID: f.ID, IdempotencyKey: f.ID + ":only", Spec: sdk.TaskSpec{Shell: "true"}})
	case ev.Type == sdk.EventTaskFinished:
		_, err = h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{})
	}
	return err
}

// runHelper runs the harness on this test binary serving helper.
func runHelper(t *testing.T, helper string) map[string]plugintest.Result {
	t.Helper()
	return runHelperEnv(t, helper, nil)
}

// runHelperEnv is runHelper with env added to the helper's environment.
func runHelperEnv(t *testing.T, helper string, env map[string]string) map[string]plugintest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := plugintest.Run(ctx, plugintest.Config{Path: os.Args[0], Args: []string{"-test.run=^$"},
		Env: withEnv(env, helperEnv, helper), Timeout: 20 * time.Second})
	require.NoError(t, err)
	byCase := map[string]plugintest.Result{}
	for _, c := range rep.Cases {
		byCase[c.Case] = c
	}
	return byCase
}

// A plugin that asks again with the same key after the answer to its
// CreateFlow was lost passes create-flow: it got the same flow, and
// acknowledged the follow-up's flow.started.
func TestCreateFlowCasePasses(t *testing.T) {
	t.Parallel()
	c := runHelper(t, "follower")["create-flow"]
	require.True(t, c.Pass, "%s\n%s", c.Detail, strings.Join(c.Did, "\n"))
	did := strings.Join(c.Did, "\n")
	require.Contains(t, did, "but the harness lost the answer")
	require.Contains(t, did, "created false")
}

// A plugin whose CreateFlow key changes from one delivery to the next
// fails create-flow, and the report says what to do.
func TestCreateFlowCaseFailsAnUnstableKey(t *testing.T) {
	t.Parallel()
	c := runHelper(t, "forgetful")["create-flow"]
	require.False(t, c.Pass, strings.Join(c.Did, "\n"))
	require.Contains(t, c.Detail, "did not ask again with the same key")
}

// withEnv is env with key set to value, in a new map.
func withEnv(env map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range env {
		out[k] = v
	}
	return out
}
