package cli_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// tasks show prints a failure's class, its diagnosis (evidence included)
// and the usage the task reported; list views leave the raw evidence out;
// tasks flow show prints the run's usage and the chain's budget.
func TestShowClassDiagnosisAndUsage(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var task *apitype.Task
	seed(t, home, func(eng *engine.Engine) {
		var err error
		task, _, err = eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "agent"}, Budget: &sdk.Budget{Tokens: 500}})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		_, err = eng.RecordProgress(task.ID, engine.ProgressInput{From: 0, To: 10, Usage: &sdk.Usage{InputTokens: 100, OutputTokens: 20, TokenReports: 1, Cost: 0.25, CostReports: 1}})
		require.NoError(t, err)
		_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, Attempt: 1, Class: sdk.FailureNeedsDiagnosis,
			Diagnosis: &sdk.Diagnosis{Attempt: 1, State: sdk.DiagnosisDone, Evidence: "the prompt names a missing file", Uncertainty: "low",
				Recommendation: sdk.RecommendRevise, Action: "stopped: never applied by itself"}})
		require.NoError(t, err)
	})

	code, out, errOut := run(t, home, "tasks", "show", task.ID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `class:\s+needs_diagnosis\n`, out)
	require.Regexp(t, `diagnosis:\s+attempt 1: done, recommends revise\n`, out)
	require.Regexp(t, `evidence:\s+the prompt names a missing file\n`, out)
	require.Regexp(t, `usage:\s+120 tokens \(100 in, 20 out\) from 1 reports · cost 0.25 from 1 reports\n`, out)

	code, out, errOut = run(t, home, "tasks", "list", "--json")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "missing file", "list views omit raw evidence")
	var l struct{ Tasks []apitype.Task }
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Equal(t, sdk.RecommendRevise, l.Tasks[0].Diagnosis.Recommendation)

	code, out, errOut = run(t, home, "tasks", "flow", "list", "--json")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "missing file", "list views omit raw evidence")

	code, out, errOut = run(t, home, "tasks", "flow", "show", task.FlowID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `usage:\s+120 tokens`, out)
	require.Regexp(t, `budget:\s+500 tokens \(soft: counts reported usage only\)\n`, out)
	require.Contains(t, out, "diagnosis: done revise")
}

func TestBudgetFlags(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	code, out, errOut := run(t, home, "tasks", "flow", "create", "--controller", "c", "--goal", "g", "--owner", "o", "--budget-tokens", "1000", "--budget-cost", "2.5", "--json")
	require.Equal(t, 0, code, errOut)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	code, out, errOut = run(t, home, "tasks", "flow", "show", f.ID, "--json")
	require.Equal(t, 0, code, errOut)
	var v engine.FlowView
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Equal(t, &sdk.Budget{Tokens: 1000, Cost: 2.5}, v.ChainState.Budget)
	require.Nil(t, v.RunUsage, "nothing reported is not zero")

	code, _, errOut = run(t, home, "tasks", "flow", "create", "--controller", "c", "--goal", "g", "--owner", "o", "--budget-tokens", "-5")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--budget-tokens and --budget-cost must not be negative")
	code, _, errOut = run(t, home, "tasks", "run", "--budget-cost", "-1", "--", "true")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--budget-tokens and --budget-cost must not be negative")

	code, out, errOut = run(t, home, "tasks", "run", "--detach", "--json", "--budget-cost", "0.5", "--", "true")
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(out), &task))
	code, out, errOut = run(t, home, "tasks", "flow", "show", task.FlowID, "--json")
	require.Equal(t, 0, code, errOut)
	var detached engine.FlowView
	require.NoError(t, json.Unmarshal([]byte(out), &detached))
	require.Equal(t, &sdk.Budget{Cost: 0.5}, detached.ChainState.Budget)
	// The detached task's shim writes under the home until the task ends:
	// let it end before the test removes the home.
	require.Eventually(t, func() bool {
		_, out, _ := run(t, home, "tasks", "show", task.ID, "--json")
		var got apitype.Task
		return json.Unmarshal([]byte(out), &got) == nil && got.Status.Terminal()
	}, 30*time.Second, 20*time.Millisecond, "the detached task ends")
}
