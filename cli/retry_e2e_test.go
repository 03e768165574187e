package cli_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// showFlow reads flow id as tasks flow show --json prints it.
func showFlow(t *testing.T, home, id string) apitype.FlowView {
	t.Helper()
	code, stdout, errOut := run(t, home, "tasks", "flow", "show", id, "--json")
	require.Equal(t, 0, code, errOut)
	var v apitype.FlowView
	require.NoError(t, json.Unmarshal([]byte(stdout), &v), stdout)
	return v
}

// waitFlow waits, bounded, for flow id to be in status want.
func waitFlow(t *testing.T, home, id string, want sdk.FlowStatus) apitype.FlowView {
	t.Helper()
	var v apitype.FlowView
	require.Eventually(t, func() bool {
		v = showFlow(t, home, id)
		return v.Status == want
	}, 30*time.Second, 20*time.Millisecond, "flow %s did not become %s", id, want)
	return v
}

// detach runs argv as a detached task on home and returns it.
func detach(t *testing.T, home string, argv ...string) apitype.Task {
	t.Helper()
	code, stdout, errOut := run(t, home, append([]string{"tasks", "run", "--detach", "--json", "--"}, argv...)...)
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(stdout), &task), stdout)
	return task
}

// retryProcess starts flowgate tasks flow retry as a process of its own.
func retryProcess(t *testing.T, home, id string, rev int64) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "tasks", "--home", home, "flow", "retry", id, "--expected-revision", strconv.FormatInt(rev, 10), "--json")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Start())
	return cmd, &errOut
}

// exitOf is the exit code of a waited-for process.
func exitOf(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}

// TestFlowRetryRunsTheSameFlowAgain: a single run that fails is retried
// under its flow's id by two retry processes at once, of which one wins
// and the other exits 3 saying what the flow is now; the new task
// succeeds, the earlier one keeps its failure and its logs, and the
// history names the retry. A retry right before the gateway is SIGKILLed
// runs exactly once, under the next gateway.
func TestFlowRetryRunsTheSameFlowAgain(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	kill := gatewayProcess(t, home, dir)
	flag := filepath.Join(dir, "flag")
	first := detach(t, home, "sh", "-c", `if [ -f "$1" ]; then echo second run; else echo first run >&2; : > "$1"; exit 3; fi`, "sh", flag)
	failed := waitFlow(t, home, first.FlowID, sdk.FlowFailed)

	a, aErr := retryProcess(t, home, first.FlowID, failed.Revision)
	b, bErr := retryProcess(t, home, first.FlowID, failed.Revision)
	codes := []int{exitOf(t, a.Wait()), exitOf(t, b.Wait())}
	require.ElementsMatch(t, []int{0, 3}, codes, "one retry wins: %s | %s", aErr, bErr)
	lost := aErr.String() + bErr.String()
	require.Contains(t, lost, "changed since revision "+strconv.FormatInt(failed.Revision, 10))
	require.Contains(t, lost, "tasks flow history "+first.FlowID)

	done := waitFlow(t, home, first.FlowID, sdk.FlowSucceeded)
	require.Len(t, done.Tasks, 2, "one retry, one new task")
	require.Equal(t, first.ID, done.Tasks[0].ID)
	require.Equal(t, sdk.TaskFailed, done.Tasks[0].Status, "the first run keeps its end")
	require.Equal(t, first.ID, done.Tasks[1].RetryOf)
	code, stdout, errOut := run(t, home, "tasks", "logs", first.ID, "--stderr")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "first run", "the first run's logs stay readable")
	code, stdout, errOut = run(t, home, "tasks", "logs", done.Tasks[1].ID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "second run")

	code, stdout, errOut = run(t, home, "tasks", "flow", "history", first.FlowID, "--json")
	require.Equal(t, 0, code, errOut)
	var h apitype.HistoryPage
	require.NoError(t, json.Unmarshal([]byte(stdout), &h), stdout)
	var retries []apitype.HistoryEntry
	for _, e := range h.Entries {
		if e.Kind == apitype.HistoryRetry {
			retries = append(retries, e)
		}
	}
	require.Len(t, retries, 1)
	require.NotEmpty(t, retries[0].By)
	require.Contains(t, retries[0].Summary, "attempt 2")

	code, _, errOut = run(t, home, "tasks", "flow", "retry", first.FlowID)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "is succeeded")

	// A retry the gateway accepted just before it died runs once.
	ledger := filepath.Join(dir, "ledger")
	again := detach(t, home, "sh", "-c", `echo run >> "$1"; exit 4`, "sh", ledger)
	failed = waitFlow(t, home, again.FlowID, sdk.FlowFailed)
	code, _, errOut = run(t, home, "tasks", "flow", "retry", again.FlowID, "--expected-revision", strconv.FormatInt(failed.Revision, 10))
	require.Equal(t, 0, code, errOut)
	kill()
	gatewayProcess(t, home, dir)
	v := waitFlow(t, home, again.FlowID, sdk.FlowFailed)
	require.Len(t, v.Tasks, 2)
	require.Equal(t, sdk.TaskFailed, v.Tasks[1].Status)
	// The kill may land after the gateway counted the attempt and before
	// its shim started the command: that attempt provably never ran, so
	// the next gateway queues it again under a new number and says so.
	if retried := v.Tasks[1]; retried.Attempts != 1 {
		require.Equal(t, 2, retried.Attempts, "only an attempt that never ran is counted again")
		require.Contains(t, strings.Join(retried.Errors, "\n"), "attempt 1 did not run")
	}
	b2, err := os.ReadFile(ledger)
	require.NoError(t, err)
	require.Equal(t, "run\nrun\n", string(b2), "the first run and the retry, each once")
}

// TestFlowRetryOfAPipelineSaysContinue: a managed flow is never retried;
// the refusal names tasks flow continue and changes nothing.
func TestFlowRetryOfAPipelineSaysContinue(t *testing.T) {
	t.Parallel()
	r := runFiveSteps(t, false, 1)
	rev := r.revision(t)
	code, _, errOut := run(t, r.home, "tasks", "flow", "retry", r.flowID)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "flowgate tasks flow continue "+r.flowID)
	require.Equal(t, rev, r.revision(t), "a refused retry changes nothing")

	code, _, errOut = run(t, r.home, "tasks", "flow", "retry", r.flowID, "--expected-revision", "-1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--expected-revision -1")
}

// TestBlockedRunIsRetriedOrCancelled: a task that reports blocked and
// exits 0 makes tasks run exit 75 and its flow blocked on it with the
// reason; once the person acted, tasks flow retry runs it to success. A
// blocked run may be cancelled instead.
func TestBlockedRunIsRetriedOrCancelled(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	gatewayProcess(t, home, dir)
	flag := filepath.Join(dir, "flag")
	script := `if [ -f "$1" ]; then echo unblocked; else echo '{"blocked":"the flag file is missing"}' >> "$FLOWGATE_PROGRESS"; fi`
	blockedRun := func() apitype.FlowView {
		t.Helper()
		code, _, errOut := run(t, home, "tasks", "run", "--", "sh", "-c", script, "sh", flag)
		require.Equal(t, 75, code, errOut)
		require.Contains(t, errOut, "is blocked: the flag file is missing")
		fields := strings.Fields(errOut)
		id := fields[len(fields)-1]
		v := showFlow(t, home, id)
		require.Equal(t, sdk.FlowBlocked, v.Status)
		require.Len(t, v.Tasks, 1)
		require.Equal(t, sdk.TaskBlocked, v.Tasks[0].Status)
		require.Equal(t, v.Tasks[0].ID, v.BlockedTaskID)
		require.Equal(t, "the flag file is missing", v.BlockedSummary)
		return v
	}

	v := blockedRun()
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	code, stdout, errOut := run(t, home, "tasks", "flow", "retry", v.ID, "--json")
	require.Equal(t, 0, code, errOut)
	var res apitype.RetryResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
	require.Equal(t, 2, res.Attempt)
	require.Equal(t, v.ID, res.Flow.ID)
	done := waitFlow(t, home, v.ID, sdk.FlowSucceeded)
	require.Empty(t, done.BlockedTaskID)

	require.NoError(t, os.Remove(flag))
	v = blockedRun()
	code, _, errOut = run(t, home, "tasks", "flow", "cancel", v.ID)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, sdk.FlowCancelled, showFlow(t, home, v.ID).Status)
}
