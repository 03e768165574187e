package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fiveSteps is a pipeline whose every step appends its name to a ledger
// file; step three fails until its flag file exists, and step four reads
// step three's output.
const fiveSteps = `name: five
args:
  ledger: {default: /dev/null}
  flag: {default: /nonexistent}
steps:
  - id: one
    run: echo one >> "$LEDGER" && echo 1
    env: {LEDGER: "${ledger}"}
  - id: two
    run: echo two >> "$LEDGER" && echo 2
    env: {LEDGER: "${ledger}"}
  - id: three
    run: echo three >> "$LEDGER" && test -f "$FLAG" && echo 3
    env: {LEDGER: "${ledger}", FLAG: "${flag}"}
  - id: four
    run: echo four >> "$LEDGER" && cat
    stdin: $three.stdout
    env: {LEDGER: "${ledger}"}
  - id: five
    run: echo five >> "$LEDGER" && echo 5
    env: {LEDGER: "${ledger}"}
`

// fiveStepRun is the five-step workflow of the continuation tests, run
// once with pipeline run in a fresh home. Step three fails while the flag
// file is missing; every step appends its name to the ledger.
type fiveStepRun struct {
	home, dir, file, ledger, flag, flowID string
}

// runFiveSteps runs the workflow, with the flag file already there when
// withFlag is set, and requires exit code want.
func runFiveSteps(t *testing.T, withFlag bool, want int) fiveStepRun {
	t.Helper()
	dir := t.TempDir()
	r := fiveStepRun{home: shortHome(t), dir: dir, file: filepath.Join(dir, "five.lobster"), ledger: filepath.Join(dir, "ledger"), flag: filepath.Join(dir, "flag")}
	require.NoError(t, os.WriteFile(r.file, []byte(fiveSteps), 0o600))
	if withFlag {
		require.NoError(t, os.WriteFile(r.flag, nil, 0o600))
	}
	code, stdout, errOut := run(t, r.home, "pipeline", "run", r.file, "--args-json", `{"ledger":"`+r.ledger+`","flag":"`+r.flag+`"}`, "--mode", "tool")
	require.Equal(t, want, code, stdout+errOut)
	var env struct{ FlowID string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.NotEmpty(t, env.FlowID)
	r.flowID = env.FlowID
	return r
}

// revision reads the run's flow revision.
func (r fiveStepRun) revision(t *testing.T) int64 {
	t.Helper()
	code, stdout, errOut := run(t, r.home, "tasks", "flow", "show", r.flowID, "--json")
	require.Equal(t, 0, code, errOut)
	var f struct{ Revision int64 }
	require.NoError(t, json.Unmarshal([]byte(stdout), &f))
	return f.Revision
}

// TestPipelineContinueReusesWhatSucceeded runs a five-step pipeline whose
// third step fails, continues it with pipeline continue, and checks with
// the ledger that steps one and two never ran again while three to five
// did, and that the chain lists both runs.
func TestPipelineContinueReusesWhatSucceeded(t *testing.T) {
	t.Parallel()
	r := runFiveSteps(t, false, 1)
	home, ledger, flag := r.home, r.ledger, r.flag
	var (
		code           int
		stdout, errOut string
	)
	readLedger := func() []string {
		b, err := os.ReadFile(ledger)
		require.NoError(t, err)
		return strings.Fields(string(b))
	}
	require.Equal(t, []string{"one", "two", "three"}, readLedger())

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	code, stdout, errOut = run(t, home, "pipeline", "continue", "--id", r.flowID, "--reason", "the flag file was missing")
	require.Equal(t, 0, code, stdout+errOut)
	require.Contains(t, errOut, "Reused: one, two")
	require.Contains(t, errOut, "Rerun:  three, four, five")
	require.Equal(t, []string{"one", "two", "three", "three", "four", "five"}, readLedger(), "steps one and two are reused, never rerun")
	require.JSONEq(t, `[5]`, strings.TrimSpace(stdout))

	code, stdout, errOut = run(t, home, "tasks", "flow", "list", "--chain", r.flowID, "--json")
	require.Equal(t, 0, code, errOut)
	var chain struct {
		Flows []map[string]any `json:"flows"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &chain))
	require.Len(t, chain.Flows, 2, "the chain has both runs")
	require.Equal(t, "succeeded", chain.Flows[0]["status"])
	require.Equal(t, r.flowID, chain.Flows[0]["source_flow_id"])
	require.Equal(t, "failed", chain.Flows[1]["status"])
	succ := chain.Flows[0]["id"].(string)

	code, stdout, errOut = run(t, home, "tasks", "flow", "show", succ)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `chain:\s+`+r.flowID, stdout)
	require.Regexp(t, `source:\s+`+r.flowID+` at revision \d+`, stdout)
	require.Regexp(t, `reused:\s+one, two`, stdout)
	require.Regexp(t, `rerun:\s+three, four, five`, stdout)
	require.Regexp(t, `firstFailure:\s+step three failed`, stdout)
	code, stdout, _ = run(t, home, "tasks", "flow", "show", r.flowID)
	require.Equal(t, 0, code)
	require.Regexp(t, `continuedBy:\s+`+succ, stdout)

	code, _, errOut = run(t, home, "pipeline", "continue", "--id", r.flowID, "--reason", "once more")
	require.Equal(t, 2, code, "the chain has its continuation")
	require.Contains(t, errOut, "(one continuation)")
}

// TestAcceptedContinuationStartsOnceUnderTheNextGateway accepts a
// continuation with no gateway running (so nothing starts it: the state a
// gateway killed right after accepting leaves), then lets the next
// gateway, hosted by pipeline continue with the identical request, start
// it: every rerun step runs exactly once. It also checks the exit codes of
// tasks flow continue.
func TestAcceptedContinuationStartsOnceUnderTheNextGateway(t *testing.T) {
	t.Parallel()
	r := runFiveSteps(t, false, 1)
	home, ledger, flag := r.home, r.ledger, r.flag
	srcRev := r.revision(t)
	rev := strconv.FormatInt(srcRev, 10)

	code, _, errOut := run(t, home, "tasks", "flow", "continue", r.flowID, "--expected-revision", strconv.FormatInt(srcRev-1, 10), "--reason", "flag added")
	require.Equal(t, 3, code, "a stale revision exits 3: %s", errOut)

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	code, stdout, errOut := run(t, home, "tasks", "flow", "continue", r.flowID, "--expected-revision", rev, "--reason", "flag added", "--json")
	require.Equal(t, 0, code, errOut)
	var first struct {
		Flow    struct{ ID, Status string }
		Created bool
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &first))
	require.True(t, first.Created)
	require.Equal(t, "queued", first.Flow.Status, "accepted, not started: no gateway runs")

	code, stdout, errOut = run(t, home, "tasks", "flow", "continue", r.flowID, "--expected-revision", rev, "--reason", "flag added")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "Continuation already accepted (identical request): flow "+first.Flow.ID)
	code, _, errOut = run(t, home, "tasks", "flow", "continue", r.flowID, "--expected-revision", rev, "--reason", "another reason")
	require.Equal(t, 2, code, "a conflicting continuation is refused: %s", errOut)
	require.Equal(t, 2, flowCount(t, home), "and creates nothing")

	code, stdout, errOut = run(t, home, "pipeline", "continue", "--id", r.flowID, "--reason", "flag added")
	require.Equal(t, 0, code, stdout+errOut)
	require.Contains(t, errOut, "flow "+first.Flow.ID)
	b, err := os.ReadFile(ledger)
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two", "three", "three", "four", "five"}, strings.Fields(string(b)), "the continuation ran once")
}

// TestPipelineRunFromStep reruns a succeeded pipeline flow from its
// fourth step: the steps before it are reused.
func TestPipelineRunFromStep(t *testing.T) {
	t.Parallel()
	r := runFiveSteps(t, true, 0)
	home, file, ledger := r.home, r.file, r.ledger

	code, _, errOut := run(t, home, "pipeline", "run", file, "--from-step", "four")
	require.Equal(t, 2, code, "--from-step needs --id: %s", errOut)
	code, stdout, errOut := run(t, home, "pipeline", "run", file, "--from-step", "four", "--id", r.flowID, "--reason", "redo the report")
	require.Equal(t, 0, code, stdout+errOut)
	require.Contains(t, errOut, "Rerun:  four, five")
	b, err := os.ReadFile(ledger)
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two", "three", "four", "five", "four", "five"}, strings.Fields(string(b)))
}
