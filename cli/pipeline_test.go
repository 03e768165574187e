package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPipelineValidateRefusesEveryMalformedFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	files, err := filepath.Glob("../flows/testdata/malformed/*")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 30)
	fileLine := regexp.MustCompile(`\.(lobster|ya?ml|json):\d+:`)
	for _, f := range files {
		code, out, errOut := run(t, home, "pipeline", "validate", f)
		require.Equal(t, 2, code, "%s: %s", f, errOut)
		require.Empty(t, out, f)
		require.Regexp(t, fileLine, errOut, "%s: the message names file:line", f)
	}
}

func TestPipelineValidateGraphDryRun(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := t.TempDir()
	wf := filepath.Join(dir, "brief.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: brief
args:
  topic:
    default: weather
steps:
  - id: collect
    run: echo collecting ${topic}
  - id: review
    approval: Publish the ${topic} brief?
    stdin: $collect.stdout
  - id: publish
    run: echo publishing
    when: $review.approved
`), 0o600))

	code, out, errOut := run(t, home, "pipeline", "validate", wf, "--json")
	require.Equal(t, 0, code, errOut)
	// The ${topic} pasted into run: is a warning (issue 13), not an error.
	require.JSONEq(t, `{"ok":true,"file":"`+wf+`","name":"brief","steps":3,"warnings":["`+wf+
		`:6:5: step collect pastes ${topic} into its shell command, so a value holding shell syntax runs as code; write \"$LOBSTER_ARG_TOPIC\" (quoted) instead"]}`, out)
	require.Contains(t, errOut, "warning: "+wf+":6:5: step collect pastes ${topic}")
	code, _, errOut = run(t, home, "pipeline", "validate", wf, "--strict-refs")
	require.Equal(t, 2, code, "--strict-refs refuses the splice")
	require.Contains(t, errOut, `write "$LOBSTER_ARG_TOPIC" (quoted) instead`)
	code, _, errOut = run(t, home, "pipeline", "run", wf, "--strict-refs", "--dry-run")
	require.Equal(t, 2, code, "pipeline run --strict-refs refuses it too")
	require.Contains(t, errOut, "--strict-refs")

	code, out, _ = run(t, home, "pipeline", "graph", wf, "--format", "mermaid")
	require.Equal(t, 0, code)
	require.Contains(t, out, "collect")
	require.Contains(t, out, "publish")
	code, _, errOut = run(t, home, "pipeline", "graph", wf, "--format", "png")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "png")

	code, out, _ = run(t, home, "pipeline", "run", wf, "--dry-run", "--args-json", `{"topic":"markets"}`)
	require.Equal(t, 0, code)
	require.Contains(t, out, "echo collecting markets")
	code, _, errOut = run(t, home, "pipeline", "run", wf, "--dry-run", "--args-json", `{bad`)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--args-json")
	code, out, _ = run(t, home, "pipeline", "run", wf, "--mode", "tool", "--args-json", `[1]`)
	require.Equal(t, 2, code)
	require.Contains(t, out, `"type": "parse_error"`, "tool mode answers with Lobster's envelope")
}
