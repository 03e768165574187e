package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// failing is a spec that appends a line to the file ran and fails with
// stderr text; its retry policy would run it three times.
func (h *home) failing(stderr string) sdk.TaskSpec {
	spec := h.spec(`echo "$FLOWGATE_ATTEMPT" >> ran; echo '` + stderr + `' >&2; exit 1`)
	spec.Retry = &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(10 * time.Millisecond)}
	return spec
}

func TestBillingStopsTheChain(t *testing.T) {
	t.Parallel()
	h := retryHome(t)
	got := h.wait(h.create(h.failing(`{"error":{"code":"insufficient_quota"}}`)).ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.Equal(t, sdk.FailureBilling, got.Class)
	require.Equal(t, 1, got.Attempts, "a billing failure is never retried, whatever the policy")
	require.Nil(t, got.Diagnosis)
	require.Equal(t, []string{"1"}, h.lines("ran"))
	require.Contains(t, got.Errors[0], "billing failure: not retried nor diagnosed")
	c, err := h.eng().GetChain(got.FlowID)
	require.NoError(t, err)
	require.False(t, c.BillingExhaustedAt.IsZero(), "the chain is marked billing-exhausted")
	why, err := h.eng().FlowHalted(got.FlowID)
	require.NoError(t, err)
	require.Contains(t, why, "billing-exhausted")
}

func TestRateLimitIsTransient(t *testing.T) {
	t.Parallel()
	h := retryHome(t)
	got := h.wait(h.create(h.failing(`HTTP 429 Too Many Requests`)).ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.Equal(t, sdk.FailureTransient, got.Class)
	require.Equal(t, []string{"1", "2", "3"}, h.lines("ran"), "a 429 is retried with backoff as the policy allows")
	c, err := h.eng().GetChain(got.FlowID)
	require.NoError(t, err)
	require.True(t, c.BillingExhaustedAt.IsZero(), "a 429 alone is not billing")
}

func TestStartupFailureRetriesOnceInPlace(t *testing.T) {
	t.Parallel()
	h := retryHome(t)
	spec := h.spec(`echo "$FLOWGATE_ATTEMPT" >> ran; echo 'curl: (7) connect: connection refused' >&2; exit 7`)
	got := h.wait(h.create(spec).ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.Equal(t, sdk.FailureStartup, got.Class)
	require.True(t, got.InPlaceRetried)
	require.Equal(t, []string{"1", "2"}, h.lines("ran"), "one in-place retry, even without a retry policy, and no more")
	require.Contains(t, got.Errors[0], "its one in-place retry of this run")
	require.Contains(t, got.Errors[1], "its one in-place retry of this run is used")
}

func TestConnectionRefusedMidRunNeedsDiagnosis(t *testing.T) {
	t.Parallel()
	h := retryHome(t)
	spec := h.spec(`echo '{"phase":"calling"}' >> "$FLOWGATE_PROGRESS"; sleep 0.2; echo x >> ran; echo 'connection refused' >&2; exit 7`)
	got := h.wait(h.create(spec).ID)
	require.Equal(t, sdk.FailureNeedsDiagnosis, got.Class)
	require.False(t, got.InPlaceRetried)
	require.Equal(t, []string{"x"}, h.lines("ran"))
}

// diagHome is a retry home whose runner asks command for a diagnosis.
func diagHome(t *testing.T, command string) *home {
	return startHome(t, func(c *runner.Config) {
		c.Rand = func() float64 { return 0.5 }
		c.Diagnoser = runner.DiagnoserConfig{Command: command, Timeout: 2 * time.Second, MaxOutputKiB: 1}
	})
}

// TestDiagnosisIsAdviceOnly: a diagnoser that hangs, one that prints
// garbage, one that fails, one that recommends revise and one that
// recommends stop: none causes a retry or any other change to the flow,
// although the task's policy would retry it.
func TestDiagnosisIsAdviceOnly(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, command, state string
		rec                  sdk.Recommendation
		action               string
	}{
		{"hangs", `sleep 600`, sdk.DiagnosisTimedOut, "", "no retry without a valid diagnosis"},
		{"hangs with a child holding stdout", `(sleep 600; echo late) & wait`, sdk.DiagnosisTimedOut, "", "no retry without a valid diagnosis"},
		{"garbage", `echo 'it is probably fine'`, sdk.DiagnosisInvalid, "", "no retry without a valid diagnosis"},
		{"unknown recommendation", `echo '{"evidence":"e","recommendation":"rerun everything"}'`, sdk.DiagnosisInvalid, "", "no retry without a valid diagnosis"},
		{"no evidence", `echo '{"recommendation":"retry"}'`, sdk.DiagnosisInvalid, "", "no retry without a valid diagnosis"},
		{"fails", `echo '{"evidence":"e","recommendation":"retry"}'; exit 3`, sdk.DiagnosisFailed, "", "no retry without a valid diagnosis"},
		{"revise", `echo '{"evidence":"the step reads the wrong file","uncertainty":0.2,"recommendation":"revise"}'`, sdk.DiagnosisDone, sdk.RecommendRevise, "never applied by itself"},
		{"stop", `echo '{"evidence":"e","uncertainty":"low","recommendation":"stop"}'`, sdk.DiagnosisDone, sdk.RecommendStop, "advised stopping"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := diagHome(t, c.command)
			task := h.create(h.failing("something odd"))
			flowBefore, err := h.eng().GetFlow(task.FlowID)
			require.NoError(t, err)
			got := h.wait(task.ID)
			require.Equal(t, sdk.TaskFailed, got.Status)
			require.Equal(t, 1, got.Attempts, "no retry, although the policy allows three attempts")
			require.Equal(t, []string{"1"}, h.lines("ran"))
			require.Equal(t, sdk.FailureNeedsDiagnosis, got.Class)
			require.NotNil(t, got.Diagnosis)
			d := got.Diagnosis
			require.Equal(t, c.state, d.State, "diagnosis error: %s", d.Error)
			require.Equal(t, c.rec, d.Recommendation)
			require.Contains(t, d.Action, c.action)
			require.Equal(t, 1, d.Attempt)
			require.False(t, d.EndedAt.IsZero())
			tasks, err := h.eng().FlowTasks(task.FlowID)
			require.NoError(t, err)
			require.Len(t, tasks, 1, "a diagnosis creates no task")
			flow, err := h.eng().GetFlow(task.FlowID)
			require.NoError(t, err)
			require.Equal(t, flowBefore.Goal, flow.Goal)
			require.Equal(t, flowBefore.State, flow.State)
		})
	}
}

func TestDiagnosisRetryIsOnceInPlace(t *testing.T) {
	t.Parallel()
	h := diagHome(t, `cat > "$FLOWGATE_TASK_ID.request.$$"; echo '{"evidence":"a flaky upstream","uncertainty":"high","recommendation":"retry"}'`)
	task := h.create(h.failing("upstream hiccup"))
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.Equal(t, []string{"1", "2"}, h.lines("ran"), "retry advice grants one in-place retry per node per run, not more")
	require.True(t, got.InPlaceRetried)
	require.Equal(t, 2, got.Diagnosis.Attempt)
	require.Equal(t, sdk.RecommendRetry, got.Diagnosis.Recommendation)
	require.Contains(t, got.Diagnosis.Action, "already had its one in-place retry")
	require.Equal(t, "a flaky upstream", got.Diagnosis.Evidence)
	require.Equal(t, "high", got.Diagnosis.Uncertainty)
}

// TestDiagnosisContextIsBounded: the diagnoser gets the goal, the node's
// assignment and its flow's other tasks, the error, the last progress and
// milestones, and at most the configured KiB of output.
func TestDiagnosisContextIsBounded(t *testing.T) {
	t.Parallel()
	h := diagHome(t, `cat > request.json; echo '{"evidence":"e","recommendation":"stop"}'`)
	flow, err := h.eng().CreateFlow(engine.CreateFlowInput{OwnerKey: "t", ControllerID: "ctl", Goal: "ship the report"})
	require.NoError(t, err)
	spec := h.failing("final complaint")
	spec.Shell = `echo '{"milestone":"fetched"}' >> "$FLOWGATE_PROGRESS"; echo '{"phase":"writing","message":"half"}' >> "$FLOWGATE_PROGRESS"; sleep 0.2; head -c 5000 /dev/zero | tr '\0' o; ` + spec.Shell
	task, _, err := h.eng().CreateTask(engine.CreateTaskInput{FlowID: flow.ID, Label: "write", Spec: spec})
	require.NoError(t, err)
	h.wait(task.ID)
	b, err := os.ReadFile(h.path("request.json"))
	require.NoError(t, err)
	var req runner.DiagnosisRequest
	require.NoError(t, json.Unmarshal(b, &req))
	require.Equal(t, "ship the report", req.Goal)
	require.Equal(t, "write", req.Assignment.Label)
	require.Contains(t, req.Assignment.Command, "final complaint")
	require.Contains(t, req.Error, "final complaint")
	require.Equal(t, "writing", req.Progress.Phase)
	require.Equal(t, "fetched", req.Milestones[0].Name)
	require.LessOrEqual(t, len(req.Stdout)+len(req.Stderr), 1024)
	require.True(t, strings.HasSuffix(req.Stdout, "oooo"))
	require.Empty(t, req.Dependencies)
}

// TestRestartDuringDiagnosisInterrupts: a gateway that dies while its
// diagnoser runs leaves the diagnosis recorded as running; the next
// gateway marks it interrupted, does not run the diagnoser again, and does
// not retry the task.
func TestRestartDuringDiagnosisInterrupts(t *testing.T) {
	t.Parallel()
	h := diagHome(t, `echo x >> diagnosed; sleep 600`)
	task := h.create(h.failing("odd"))
	waitTask(t, h.eng(), task.ID, func(t *stored.Task) bool {
		return t.Diagnosis != nil && t.Diagnosis.State == sdk.DiagnosisRunning
	}, waitLimit)
	// The shell creates the file before echo writes to it: wait for the line.
	polltest.Until(t, "the diagnoser to start", func() bool { return len(h.lines("diagnosed")) == 1 })
	// The gateway dies: its store goes away before anything else it
	// would write.
	require.NoError(t, h.gw.st.Close())
	h.gw.st = nil
	h.crashRunner()
	h.open()
	h.start()
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.Equal(t, sdk.DiagnosisInterrupted, got.Diagnosis.State)
	require.Contains(t, got.Diagnosis.Error, "never resumed")
	require.Equal(t, []string{"1"}, h.lines("ran"), "not retried")
	require.Equal(t, []string{"x"}, h.lines("diagnosed"), "the diagnoser is not run again")
}

func TestUsageIsSummedAndBudgetStopsRetries(t *testing.T) {
	t.Parallel()
	h := retryHome(t)
	spec := h.failing("odd")
	spec.Shell = `echo '{"usage":{"input_tokens":40,"output_tokens":20,"cost":0.5}}' >> "$FLOWGATE_PROGRESS"; echo '{"usage":{"input_tokens":30,"output_tokens":10}}' >> "$FLOWGATE_PROGRESS"; sleep 0.2; ` + spec.Shell
	task, _, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "t", Spec: spec, Budget: &sdk.Budget{Tokens: 100}})
	require.NoError(t, err)
	got := h.wait(task.ID)
	require.Equal(t, []string{"1"}, h.lines("ran"), "the chain's budget is used up: no retry")
	require.Contains(t, got.Errors[0], "used its budget")
	require.Equal(t, &sdk.Usage{InputTokens: 70, OutputTokens: 30, Cost: 0.5, TokenReports: 2, CostReports: 1}, got.Usage)
	c, err := h.eng().GetChain(got.FlowID)
	require.NoError(t, err)
	require.Equal(t, got.Usage, c.Usage)
	require.False(t, c.BudgetExhaustedAt.IsZero())
}

// crashRunner stops the runner of a gateway whose store is already
// closed: nothing it would still record reaches the store, as when the
// gateway process is killed.
func (h *home) crashRunner() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(h.t, h.gw.run.Stop(ctx))
	h.gw = nil
}

// TestCancelDuringDiagnosis: cancelling the task stops its diagnoser; the
// task ends cancelled, with the diagnosis cancelled, and is not retried.
func TestCancelDuringDiagnosis(t *testing.T) {
	t.Parallel()
	h := diagHome(t, `sleep 600`)
	task := h.create(h.failing("odd"))
	waitTask(t, h.eng(), task.ID, func(t *stored.Task) bool {
		return t.Diagnosis != nil && t.Diagnosis.State == sdk.DiagnosisRunning
	}, waitLimit)
	_, err := h.eng().CancelTask(task.ID)
	require.NoError(t, err)
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskCancelled, got.Status)
	require.Equal(t, sdk.DiagnosisCancelled, got.Diagnosis.State)
	require.Equal(t, []string{"1"}, h.lines("ran"))
}
