package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeStage writes an executable stage named name into dir that prints
// its stdin items wrapped as {"got": items}.
func writeStage(t *testing.T, dir, name string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nprintf '{\"got\":%s}' \"$(cat)\"\n"), 0o755))
}

// TestExecutableStagesAndStateThroughTheGateway runs pipelines through a
// gateway hosted by the command and the real pipeline plugin process: a
// stage from $FLOWGATE_HOME/stages, one from gateway.yaml's stage_path,
// and state.set, whose file is under the home.
func TestExecutableStagesAndStateThroughTheGateway(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	writeStage(t, filepath.Join(home, "stages"), "home.stage")
	extra := t.TempDir()
	writeStage(t, extra, "extra.stage")
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte("stage_path: ["+extra+"]\n"), 0o600))

	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", `exec --json --shell "echo [1]" | home.stage | extra.stage | state.set last`)
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"protocolVersion":1,"ok":true,"status":"ok","output":[{"got":[{"got":[1]}]}],"requiresApproval":null,"requiresInput":null}`, withoutFlowID(t, stdout))
	b, err := os.ReadFile(filepath.Join(home, "pipeline-state", "pipelines", "last.json"))
	require.NoError(t, err)
	require.JSONEq(t, `{"got":[{"got":[1]}]}`, string(b))

	code, stdout, errOut = run(t, home, "pipeline", "run", "commands.list | where name==extra.stage | pick name,sideEffects")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `[{"name":"extra.stage","sideEffects":["local_exec"]}]`, stdout)
}

// TestPipelineDryRunChecksStageNames: --dry-run prints the stages, knows
// the executable stages of the home, and refuses an unknown stage with
// exit 2, saying how to add it.
func TestPipelineDryRunChecksStageNames(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	writeStage(t, filepath.Join(home, "stages"), "summarize")
	code, _, errOut := run(t, home, "pipeline", "run", "--dry-run", "state.get k | summarize --prompt hi | diff.last --key k")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "[DRY RUN] Pipeline (3 stages):\n  1. state.get  args: k\n  2. summarize  args: prompt=hi\n  3. diff.last  args: key=k\n", errOut)

	code, _, errOut = run(t, home, "pipeline", "run", "--dry-run", "state.get k | gog.gmail.search")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "Unknown command: gog.gmail.search (no built-in stage has this name")
	require.Contains(t, errOut, "put an executable named gog.gmail.search in $FLOWGATE_HOME/stages")
}

// TestValidateAndDryRunOfFilesCheckStages: validate lists a file's
// pipelines with their stages (text and --json), and validate and run
// --dry-run refuse a stage nobody provides with exit 2.
func TestValidateAndDryRunOfFilesCheckStages(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.lobster")
	require.NoError(t, os.WriteFile(good, []byte(`name: good
steps:
  - id: list
    pipeline: exec --json cat x.json | where a>1 | state.set seen
  - id: fan
    parallel:
      branches:
        - id: b
          pipeline: diff.last --key k
`), 0o600))
	code, stdout, errOut := run(t, home, "pipeline", "validate", good)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, good+": ok (\"good\", 2 steps)\n  pipeline list: exec | where | state.set\n  pipeline fan/b: diff.last\n", stdout)
	code, stdout, errOut = run(t, home, "pipeline", "validate", "--json", good)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `"pipelines": [`)
	require.Contains(t, stdout, `"stages": [
        "exec",
        "where",
        "state.set"
      ]`)

	bad := filepath.Join(dir, "bad.lobster")
	require.NoError(t, os.WriteFile(bad, []byte("steps:\n  - id: ask\n    pipeline: exec echo hi | summarize --prompt x\n"), 0o600))
	for _, args := range [][]string{{"pipeline", "validate", bad}, {"pipeline", "run", "--dry-run", bad}} {
		code, _, errOut = run(t, home, args...)
		require.Equal(t, 2, code, args)
		require.Contains(t, errOut, "Workflow step ask pipeline references unknown command: summarize (no built-in stage has this name", args)
	}
	writeStage(t, filepath.Join(home, "stages"), "summarize")
	code, stdout, errOut = run(t, home, "pipeline", "run", "--dry-run", bad)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "[pipeline]")
}
