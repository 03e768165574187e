package gateway_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// TestConfiguredClassificationAndDiagnoser: the gateway config's failure
// patterns and diagnoser reach the runner: a runtime's own billing code
// stops its task, and a failure that needs a diagnosis gets the
// configured diagnoser's advice, which is stored and not executed.
func TestConfiguredClassificationAndDiagnoser(t *testing.T) {
	t.Parallel()
	fc, err := gateway.LoadConfig(writeConfig(t, `failures:
  agent:
    billing: [PAYMENT_REQUIRED]
diagnoser:
  command: echo '{"evidence":"the input file is empty","recommendation":"revise"}'
  timeout: 10s
`))
	require.NoError(t, err)
	_, c, _ := startConfigured(t, fc)
	ctx := context.Background()

	retry := &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(10 * time.Millisecond)}
	billing, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "o", Runtime: "agent",
		Spec: sdk.TaskSpec{Shell: "echo PAYMENT_REQUIRED >&2; exit 1", Retry: retry}})
	require.NoError(t, err)
	odd, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "o", Runtime: "agent",
		Spec: sdk.TaskSpec{Shell: "echo odd >&2; exit 1", Retry: retry}})
	require.NoError(t, err)

	got := waitEnded(t, c, billing.ID)
	require.Equal(t, sdk.FailureBilling, got.Class)
	require.Equal(t, 1, got.Attempts)
	v, err := c.ViewFlow(ctx, got.FlowID)
	require.NoError(t, err)
	require.False(t, v.ChainState.BillingExhaustedAt.IsZero())

	got = waitEnded(t, c, odd.ID)
	require.Equal(t, sdk.FailureNeedsDiagnosis, got.Class)
	require.Equal(t, 1, got.Attempts, "a revise is never executed, nor is a blind retry")
	require.Equal(t, sdk.RecommendRevise, got.Diagnosis.Recommendation)
	require.Equal(t, "the input file is empty", got.Diagnosis.Evidence)
}

func waitEnded(t *testing.T, c api.Client, id string) *stored.Task {
	t.Helper()
	var task *stored.Task
	polltest.Until(t, "task "+id+" to end", func() (bool, string) {
		var err error
		task, err = c.ResolveTask(context.Background(), id)
		require.NoError(t, err)
		return task.Status.Terminal(), fmt.Sprintf("task %s is still %s", id, task.Status)
	})
	return task
}
