package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPipelineRunsAPipelineString runs a pipeline string as a managed flow
// through a gateway hosted by the command and the real pipeline plugin.
func TestPipelineRunsAPipelineString(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool",
		`exec --json --shell "echo '[{\"n\":1},{\"n\":3},{\"n\":2}]'" | where n>1 | sort --key n --desc | map --unwrap n`)
	require.Equal(t, 0, code, errOut)
	var env struct {
		OK     bool
		Status string
		Output []any
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.True(t, env.OK, stdout)
	require.Equal(t, "ok", env.Status)
	require.Equal(t, []any{3.0, 2.0}, env.Output)

	// Several arguments are joined into one pipeline string.
	code, stdout, errOut = run(t, home, "pipeline", "run", "exec", "echo", "hi", "|", "template", "'<{{.}}>'")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `["<hi>"]`, stdout)
}

func TestPipelineStringParseErrorsAndDryRun(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, _, errOut := run(t, home, "pipeline", "run", "head | | json")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "Parse error: Empty command stage")

	code, stdout, _ := run(t, home, "pipeline", "run", "--mode", "tool", "where 'a=1")
	require.Equal(t, 2, code)
	require.Equal(t, "{\n  \"protocolVersion\": 1,\n  \"ok\": false,\n  \"error\": {\n    \"type\": \"parse_error\",\n    \"message\": \"Unclosed quote\"\n  }\n}\n", stdout, "Lobster's bytes")

	code, _, errOut = run(t, home, "pipeline", "run", "--dry-run", "exec --json --shell 'echo [1]' | head --n 2")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "[DRY RUN] Pipeline (2 stages):\n  1. exec  args: json=true, shell=echo [1]\n  2. head  args: n=2\n", errOut)

	// A directory, or a file without a workflow extension, is no workflow
	// file: the argument is a pipeline string, and its command unknown,
	// which a dry run refuses as bad input.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600))
	code, _, errOut = run(t, home, "pipeline", "run", "--dry-run", filepath.Join(dir, "notes.txt"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "Unknown command: "+filepath.Join(dir, "notes.txt"))
}
