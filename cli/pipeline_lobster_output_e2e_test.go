package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lobsterOut reads what real Lobster printed for a case of
// flows/testdata/lobster (see capture.sh there).
func lobsterOut(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "flows", "testdata", "lobster", name+".golden"))
	require.NoError(t, err)
	return string(b)
}

// lobsterInput is the input those cases ran over, read by an exec stage.
const lobsterInput = "exec --json cat ../flows/testdata/lobster/input.json"

// TestPipelineStringPrintsLobsterBytes runs pipeline strings through the
// command and the pipeline controller as a user does and compares what
// they print with real Lobster's bytes: objects keep their keys' order
// through exec, the stages and the output; json and table are sinks
// whose rendering comes ahead of the envelope, with an output of [].
func TestPipelineStringPrintsLobsterBytes(t *testing.T) {
	t.Parallel()
	home := shortHome(t)

	code, stdout, errOut := run(t, home, "pipeline", "run", lobsterInput+" | pick tags,name,1")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, lobsterOut(t, "pick"), stdout)

	code, stdout, errOut = run(t, home, "pipeline", "run", lobsterInput+" | pick note | head --n 4")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, lobsterOut(t, "escape"), stdout, "<, > and & are written as they are")

	code, stdout, errOut = run(t, home, "pipeline", "run", lobsterInput+" | table")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, lobsterOut(t, "table"), stdout, "human mode prints the table alone")

	code, stdout, errOut = run(t, home, "pipeline", "run", "--mode", "tool", lobsterInput+" | dedupe | json")
	require.Equal(t, 0, code, errOut)
	rendered := lobsterOut(t, "json")
	require.True(t, strings.HasPrefix(stdout, rendered), "the rendering comes first:\n%s", stdout)
	var env struct {
		OK     bool
		Status string
		Output json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(stdout, rendered)), &env), stdout)
	require.True(t, env.OK)
	require.Equal(t, "ok", env.Status)
	require.JSONEq(t, `[]`, string(env.Output), "a sink's output is empty")

	// A for_each's rows are {item, index, sub-steps} in that order.
	code, stdout, errOut = run(t, home, "pipeline", "run", filepath.Join("..", "flows", "testdata", "lobster", "foreach.lobster"))
	require.Equal(t, 0, code, errOut)
	require.Equal(t, lobsterOut(t, "foreach"), stdout)
}

// TestWorkflowObjectsKeepTheirYAMLOrder runs a workflow whose objects are
// written in its YAML (an arg's default, a run step's and a pipeline
// step's stdin literals) and compares its output with real Lobster's
// bytes: every object keeps the order its keys were written in, and an
// object given by --args-json keeps its order too.
func TestWorkflowObjectsKeepTheirYAMLOrder(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	file := filepath.Join("..", "flows", "testdata", "lobster", "order.lobster")

	code, stdout, errOut := run(t, home, "pipeline", "run", file)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, lobsterOut(t, "order"), stdout)

	code, stdout, errOut = run(t, home, "pipeline", "run", file, "--args-json", `{"cfg":{"q":{"z":1,"a":2},"b":"<&>"}}`)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, lobsterOut(t, "order_args"), stdout)
}

// TestEmailTriageStageThroughTheCommand runs Lobster's email.triage as a
// user does, over the messages of flows/testdata/lobster/emails.json,
// and compares the bytes with real Lobster's; commands.list lists it.
func TestEmailTriageStageThroughTheCommand(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, stdout, errOut := run(t, home, "pipeline", "run", "exec --json cat ../flows/testdata/lobster/emails.json | email.triage --limit 2")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, lobsterOut(t, "email_triage_limit_2"), stdout)

	code, stdout, errOut = run(t, home, "pipeline", "run", "commands.list | where name==email.triage | pick name")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `[{"name":"email.triage"}]`, stdout)
}

// flowIDLine, resumeToken and approvalID match what flowgate's envelope adds to Lobster's (the
// flow's id, last) and the values that differ on every run.
var (
	flowIDLine  = regexp.MustCompile(`,\n  "flowId": "[^"]*"`)
	resumeToken = regexp.MustCompile(`"resumeToken": "[^"]*"`)
	approvalID  = regexp.MustCompile(`"approvalId": "[^"]*"`)
)

// TestToolEnvelopeIsLobsterBytes runs pipeline strings in tool mode and
// compares the envelopes, byte for byte, with real Lobster's: keys in
// Lobster's order, <, > and & and U+2028 written as they are, in the
// output and in an approval request; flowgate's flowId, last, aside.
func TestToolEnvelopeIsLobsterBytes(t *testing.T) {
	t.Parallel()
	home := shortHome(t)

	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", lobsterInput+" | pick note,name | head --n 4")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `"flowId": "`)
	require.Equal(t, lobsterOut(t, "tool_output"), flowIDLine.ReplaceAllString(stdout, ""))

	code, stdout, errOut = run(t, home, "pipeline", "run", "--mode", "tool", lobsterInput+` | pick note | approve --prompt "<ok & go>?"`)
	require.Equal(t, 0, code, errOut)
	got := flowIDLine.ReplaceAllString(stdout, "")
	got = resumeToken.ReplaceAllString(got, `"resumeToken": "TOKEN"`)
	got = approvalID.ReplaceAllString(got, `"approvalId": "ID"`)
	require.Equal(t, lobsterOut(t, "tool_approve"), got)
}

// TestPipelineParseErrorFailsItsStep loads a workflow whose pipeline:
// does not parse, as Lobster does: the step fails when it runs with
// Lobster's message, so on_error: continue goes on past it; validate
// reports it before any run.
func TestPipelineParseErrorFailsItsStep(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	dir := t.TempDir()
	file := func(name, onError string) string {
		p := filepath.Join(dir, name)
		wf := "steps:\n  - id: p\n    pipeline: exec --json --shell \"echo [1] | pick a\n" + onError + "  - id: after\n    run: echo after\n"
		require.NoError(t, os.WriteFile(p, []byte(wf), 0o600))
		return p
	}
	cont, stop := file("cont.lobster", "    on_error: continue\n"), file("stop.lobster", "")

	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", cont)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `"after\n"`)

	code, stdout, _ = run(t, home, "pipeline", "run", "--mode", "tool", stop)
	require.Equal(t, 1, code)
	require.Contains(t, stdout, "Workflow step p pipeline parse failed: Unclosed quote")

	code, _, errOut = run(t, home, "pipeline", "validate", stop)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "stop.lobster:3:")
	require.Contains(t, errOut, "Workflow step p pipeline parse failed: Unclosed quote")
}
