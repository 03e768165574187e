package pipeline_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// stageDir makes a stage directory with an executable stage echo.args,
// which prints its argv, its args object and its stdin as one JSON
// object, described by a sidecar; an executable named like a built-in
// (where); and a file nobody may execute.
func stageDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nprintf '{\"argv\":\"%s\",\"args\":%s,\"stdin\":%s}\\n' \"$*\" \"$FLOWGATE_STAGE_ARGS\" \"$(cat)\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "echo.args"), []byte(script), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "echo.args.json"), []byte(`{"description":"Echo the stage's input","sideEffects":["none"]}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "where"), []byte("#!/bin/sh\necho hijacked\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "not.exec"), []byte("#!/bin/sh\n"), 0o644))
	return dir
}

// TestExecutableStage: an executable on the stage path named like a
// stage runs as a task, with the items as a JSON array on stdin, the
// arguments as argv and as an args object, and its JSON stdout as items.
func TestExecutableStage(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{StagePath: []string{filepath.Join(t.TempDir(), "missing"), stageDir(t)}})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		out := runString(t, h, c, `exec --json --shell "echo '[{\"n\":1},{\"n\":2}]'" | where n>1 | echo.args pos1 --mode=x --dry`)
		require.JSONEq(t, `[{"argv":"--dry --mode=x pos1","args":{"mode":"x","dry":true,"_":["pos1"]},"stdin":[{"n":2}]}]`, out)
	})
}

// TestCommandsListShowsExecutableStages: commands.list lists executable
// stages with the description and sideEffects of their sidecar; a file
// nobody may execute is no stage, and an executable never replaces a
// built-in command.
func TestCommandsListShowsExecutableStages(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{StagePath: []string{stageDir(t)}})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		out := runString(t, h, c, `commands.list | where name==echo.args`)
		require.JSONEq(t, `[{"name":"echo.args","description":"Echo the stage's input","sideEffects":["none"]}]`, out)
		require.JSONEq(t, `[]`, runString(t, h, c, `commands.list | where name==not.exec`))
		require.JSONEq(t, `[{"n":2}]`, runString(t, h, c, `exec --json --shell "echo '[{\"n\":1},{\"n\":2}]'" | where n>1`), "the built-in where runs")
		require.JSONEq(t, `[{"name":"diff.last","sideEffects":["writes_state"]},{"name":"exec","sideEffects":["local_exec"]},{"name":"state.get","sideEffects":["reads_state"]},{"name":"state.set","sideEffects":["writes_state"]},{"name":"workflows.run","sideEffects":["local_exec","writes_state"]}]`,
			runString(t, h, c, `commands.list | where sideEffects.0!=null | pick name,sideEffects | where name!=approve | where name!=ask | where name!=echo.args | where sideEffects.0!=calls_model`))
	})
}

// TestMissingStageSaysHowToAddIt: a stage no built-in, no plugin and no
// executable provides fails with Lobster's message and both ways to add
// the stage.
func TestMissingStageSaysHowToAddIt(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("p", map[string]any{"pipeline": "summarize --prompt hi", "args": map[string]any{}, "cwd": t.TempDir()})
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, `Unknown command: summarize (no built-in stage has this name, no controller plugin of the gateway provides it and no executable "summarize" is on the stage path; to add it, put an executable named summarize in $FLOWGATE_HOME/stages or in a directory listed under stage_path in gateway.yaml`)
		require.Contains(t, f.BlockedSummary, `or add a controller plugin that provides it (sdk.Info.Stages) under plugins: in gateway.yaml`)
	})
}
