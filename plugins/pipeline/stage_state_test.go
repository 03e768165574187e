package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// newControllerWith is newController with options.
func newControllerWith(opts pipeline.Options) *controller {
	return &controller{Controller: pipeline.NewWithOptions(opts), runner: &runner{}}
}

// runString runs pipeline string text as a flow to its end and returns
// the flow's output. In text, KEY stands for a key of the subtest's own
// (sdktest.Run runs each test twice over one state directory).
func runString(t *testing.T, h *sdktest.Harness, c *controller, text string) string {
	t.Helper()
	text = strings.ReplaceAll(text, "KEY", subKey(t))
	f := h.StartFlow("p", map[string]any{"pipeline": text, "args": map[string]any{}, "cwd": t.TempDir()})
	runActive(t, h, c, f.ID)
	f = h.Flow(f.ID)
	require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
	st, _ := readState(t, f)
	return string(st.Output)
}

// subKey is a state key of this subtest's own.
func subKey(t *testing.T) string { return "k-" + filepath.Base(t.Name()) }

// TestStateSetAndGet: state.set stores one item as itself and several as
// an array, in "<key>.json" under the state directory (0600, indented
// JSON as Lobster writes it), and outputs the value; state.get outputs the
// stored value, null when there is none. Pipeline strings share keys.
func TestStateSetAndGet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newControllerWith(pipeline.Options{StateDir: dir})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		require.JSONEq(t, `[null]`, runString(t, h, c, "state.get KEY"), "nothing stored yet")
		// The one item is the array, which the flow's output spreads.
		require.JSONEq(t, `[1,2]`, runString(t, h, c, `exec --json --shell "echo '[1,2]'" | state.set KEY`))
		file := filepath.Join(dir, "pipelines", subKey(t)+".json")
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, "[\n  1,\n  2\n]\n", string(b), "several items are stored as one array")
		fi, err := os.Stat(file)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		require.JSONEq(t, `[{"v":[1,2]}]`, runString(t, h, c, "state.get KEY | map --wrap v"), "state.get outputs the value as one item")

		require.JSONEq(t, `[{"a":1}]`, runString(t, h, c, `exec --json --shell "echo '{\"a\":1}'" | state.set KEY`))
		require.JSONEq(t, `[{"a":1}]`, runString(t, h, c, "state.get KEY"), "one item is stored as itself")
	})
}

// TestDiffLast: diff.last compares the items with the value stored under
// its key, stores them, and reports {kind, key, changed, before, after}.
func TestDiffLast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newControllerWith(pipeline.Options{StateDir: dir})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		k := subKey(t)
		v1 := `exec --json --shell "echo '{\"v\":1,\"w\":[1]}'" | diff.last --key KEY`
		require.JSONEq(t, `[{"kind":"diff.last","key":"`+k+`","changed":true,"before":null,"after":{"v":1,"w":[1]}}]`, runString(t, h, c, v1))
		require.JSONEq(t, `[{"kind":"diff.last","key":"`+k+`","changed":false,"before":{"v":1,"w":[1]},"after":{"v":1,"w":[1]}}]`, runString(t, h, c, v1))
		v2 := `exec --json --shell "echo '{\"v\":2}'" | diff.last --key KEY`
		require.JSONEq(t, `[{"kind":"diff.last","key":"`+k+`","changed":true,"before":{"v":1,"w":[1]},"after":{"v":2}}]`, runString(t, h, c, v2))
		require.JSONEq(t, `[{"v":2}]`, runString(t, h, c, "state.get KEY"), "diff.last stores under its key")
	})
}

// TestStateStagesRunOncePerRun: every pass of the controller runs a
// pipeline's stages again from the first; diff.last is answered from the
// flow's state on the passes after its first, so the items an approve
// gate showed are the items that go on once it is approved.
func TestStateStagesRunOncePerRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newControllerWith(pipeline.Options{StateDir: dir})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		text := strings.ReplaceAll(`exec --json --shell "echo 7" | diff.last --key KEY | approve | map --unwrap changed`, "KEY", subKey(t))
		f := h.StartFlow("p", map[string]any{"pipeline": text, "args": map[string]any{}, "cwd": t.TempDir()})
		runActive(t, h, c, f.ID)
		w := readWait(t, h.Flow(f.ID))
		require.Equal(t, []any{map[string]any{"kind": "diff.last", "key": subKey(t), "changed": true, "before": nil, "after": 7.0}}, w.Items)
		f = decide(t, h, f.ID, w.Step, map[string]any{"approved": true})
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `[true]`, string(st.Output), "the change that was approved, not a second comparison")
	})
}

// TestStateFilesArePerWorkflow: a workflow file's keys are its own, apart
// from other files' and from pipeline strings'.
func TestStateFilesArePerWorkflow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newControllerWith(pipeline.Options{StateDir: dir})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		runString(t, h, c, `exec --json --shell "echo 1" | state.set statekey`)
		file := filepath.Join(t.TempDir(), "state.lobster")
		require.NoError(t, os.WriteFile(file, []byte(`steps:
  - id: read
    pipeline: state.get statekey
  - id: write
    pipeline: exec --json --shell "echo 2" | state.set statekey
`), 0o600))
		f := h.StartFlow("state", map[string]any{"file": file, "args": map[string]any{}, "cwd": t.TempDir()})
		runActive(t, h, c, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"read","stdout":"null","json":null}`, string(st.Results["read"]), "the pipeline strings' key is not the file's")
		matches, err := filepath.Glob(filepath.Join(dir, "state-*", "statekey.json"))
		require.NoError(t, err)
		require.NotEmpty(t, matches, "the file's keys are in a directory of its own")
	})
}

// TestStateStagesNeedAHome: without a state directory (a controller the
// gateway did not give its home), state stages fail saying why.
func TestStateStagesNeedAHome(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("p", map[string]any{"pipeline": "state.set k", "args": map[string]any{}, "cwd": t.TempDir()})
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, "state.set keeps values under the gateway's home, which this pipeline controller was not given (FLOWGATE_HOME is unset)")
	})
}

// TestStateKeysAreFileNames pins Lobster's key-to-file rule and the keys
// it refuses.
func TestStateKeysAreFileNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newControllerWith(pipeline.Options{StateDir: dir})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		runString(t, h, c, `exec --json --shell "echo 1" | state.set '__A b//c.D__KEY'`)
		_, err := os.Stat(filepath.Join(dir, "pipelines", "a_b_c.d_"+strings.ToLower(subKey(t))+".json"))
		require.NoError(t, err)
		f := h.StartFlow("p", map[string]any{"pipeline": "state.set '//'", "args": map[string]any{}, "cwd": t.TempDir()})
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, `state key "//" is empty/invalid`)
	})
}

// TestLargeStateStageOutputIsNamed: a state stage whose recorded output
// does not fit the flow's state fails the flow, naming the state stages.
func TestLargeStateStageOutputIsNamed(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{StateDir: t.TempDir()})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("p", map[string]any{"pipeline": `exec seq 1 40000 | template --text '{{.}}-padding-padding-padding-padding' | state.set KEY | map --unwrap length`, "args": map[string]any{}, "cwd": t.TempDir()})
		runActive(t, h, c, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, "the outputs of its state.get, state.set and diff.last stages are")
	})
}
