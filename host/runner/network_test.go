package runner_test

import (
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// TestClassifyFatalFirst: authentication failures are fatal even when
// their text holds words of a network failure ("connection"), for every
// runtime; an agent's network drops are transient at any point of the
// run, and what nothing recognises is unknown (needs_diagnosis).
func TestClassifyFatalFirst(t *testing.T) {
	t.Parallel()
	cases := []struct {
		runtime, stderr string
		reported        bool
		want            sdk.FailureClass
	}{
		{"cli", "HTTP 401 Unauthorized: connection refused by the auth proxy", false, sdk.FailureFatal},
		{"agent", "error 401: connection reset while authenticating", true, sdk.FailureFatal},
		{"agent", "status: 403 (connection closed)", true, sdk.FailureFatal},
		{"agent", "Invalid API key; check your connection settings", true, sdk.FailureFatal},
		{"agent", "invalid_api_key", true, sdk.FailureFatal},
		{"agent", "open /root/.config: permission denied", false, sdk.FailureFatal},
		{"agent", "authentication failed (ECONNRESET)", true, sdk.FailureFatal},
		{"agent", "401 insufficient_quota", true, sdk.FailureBilling},
		{"agent", "read tcp 10.0.0.2:5123: connection reset by peer", true, sdk.FailureTransient},
		{"agent", "dial tcp: lookup api.example: no such host", true, sdk.FailureTransient},
		{"agent", "connect: network is unreachable", true, sdk.FailureTransient},
		{"agent", "HTTP 429 Too Many Requests", true, sdk.FailureTransient},
		{"agent", "unexpected EOF", true, sdk.FailureNeedsDiagnosis},
		{"cli", "read tcp: connection reset by peer", true, sdk.FailureNeedsDiagnosis},
		{"cli", "took 1401ms", true, sdk.FailureNeedsDiagnosis},
	}
	c, err := runner.NewClassifier(nil)
	require.NoError(t, err)
	for _, tc := range cases {
		got, err := c.Classify(runner.Failure{Runtime: tc.runtime, ExitCode: 1, Stderr: tc.stderr, Reported: tc.reported})
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s: %q", tc.runtime, tc.stderr)
	}
	got, err := c.Classify(runner.Failure{Runtime: "agent", ExitCode: 1, Reported: true,
		Stdout: "tool call answered 401 Unauthorized; retried with a fresh token", Stderr: "read: connection reset by peer"})
	require.NoError(t, err)
	require.Equal(t, sdk.FailureTransient, got, "a 401 quoted in the transcript on stdout is not the failure")
}

// TestAgentRetryDefaults: an agent task created without a retry policy
// gets the agent one: 6 attempts, 4s base, 120s cap.
func TestAgentRetryDefaults(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	task, _, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "t", Runtime: sdk.RuntimeAgent, Spec: h.spec("true")})
	require.NoError(t, err)
	require.Equal(t, &sdk.RetryPolicy{MaxAttempts: 6, Backoff: sdk.Duration(4 * time.Second), MaxBackoff: sdk.Duration(2 * time.Minute)}, task.Spec.Retry)
	cli := h.create(h.spec("true"))
	require.Nil(t, cli.Spec.Retry, "a cli task keeps no retry by default")
}

// refusedEndpoint returns a loopback host:port that refuses connections
// until the test listens on it.
func refusedEndpoint(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	endpoint := l.Addr().String()
	require.NoError(t, l.Close())
	return endpoint
}

// logBuffer collects log lines for a test to wait on.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(l.b.String(), s)
}

// TestNetworkDropWaitsForProbe: an agent task whose first attempt fails
// on a network drop waits, before its retry, until the probe endpoint
// answers. The endpoint refuses until the test opens a listener on it
// (after the runner has seen it refuse); then the retry runs, resumed,
// and the task records both attempts.
func TestNetworkDropWaitsForProbe(t *testing.T) {
	t.Parallel()
	endpoint := refusedEndpoint(t)

	logs := &logBuffer{}
	h := startHome(t, func(c *runner.Config) {
		c.Probe = runner.ProbeConfig{Endpoint: endpoint, Interval: 20 * time.Millisecond, Timeout: time.Second}
		c.Logger = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info})
	})
	spec := h.spec(`echo "$FLOWGATE_ATTEMPT" >> ran; if [ "$FLOWGATE_ATTEMPT" = 1 ]; then echo 'read tcp: connection reset by peer' >&2; exit 1; fi`)
	spec.Retry = &sdk.RetryPolicy{MaxAttempts: 6, Backoff: sdk.Duration(time.Millisecond)}
	task, _, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "t", Runtime: sdk.RuntimeAgent, Spec: spec})
	require.NoError(t, err)

	polltest.Until(t, "the runner to find the network down", func() bool { return logs.contains("network down") })
	got, err := h.eng().GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status, "the task waits, its retry not queued")
	require.Equal(t, 1, got.Attempts)

	l, err := net.Listen("tcp", endpoint)
	require.NoError(t, err)
	defer l.Close()

	got = h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.Equal(t, 2, got.Attempts)
	require.Equal(t, []string{"1", "2"}, h.lines("ran"))
	require.Len(t, got.AttemptLog, 2)
	require.Equal(t, sdk.FailureTransient, got.AttemptLog[0].Class)
	require.Positive(t, got.AttemptLog[0].Offline, "the offline time is recorded")
	require.Equal(t, sdk.AttemptRecord{Attempt: 2, Resumed: true}, got.AttemptLog[1])
}

// TestNetworkDropGivesUp: a task whose network stays down past
// MaxOffline ends failed, reason "offline", without another attempt.
func TestNetworkDropGivesUp(t *testing.T) {
	t.Parallel()
	endpoint := refusedEndpoint(t)

	h := startHome(t, func(c *runner.Config) {
		c.Probe = runner.ProbeConfig{Interval: 5 * time.Millisecond, Timeout: time.Second, MaxOffline: 20 * time.Millisecond}
	})
	spec := h.spec(`echo "$FLOWGATE_ATTEMPT" >> ran; exit 75`)
	spec.Retry, spec.Probe = &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(time.Millisecond)}, endpoint
	got := h.wait(h.create(spec).ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.Equal(t, "offline", got.Reason)
	require.Equal(t, []string{"1"}, h.lines("ran"))
	require.Contains(t, got.Errors[len(got.Errors)-1], "the network stayed down")
}

// TestReconcileLeavesANetworkWaitToTheGateway: a command that reconciles
// records without a gateway finds an attempt that failed on a network
// drop with its probe down; it does not wait for the network, and leaves
// the task running for the next gateway to retry.
func TestReconcileLeavesANetworkWaitToTheGateway(t *testing.T) {
	t.Parallel()
	endpoint := refusedEndpoint(t)

	h := startHome(t, nil)
	spec := h.spec(`while [ ! -f go ]; do sleep 0.02; done; exit 75`)
	spec.Retry, spec.Probe = &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(time.Millisecond)}, endpoint
	task := h.create(spec)
	waitTask(t, h.eng(), task.ID, func(t *stored.Task) bool { return t.PID != 0 }, waitLimit)
	h.close()
	require.NoError(t, os.WriteFile(h.path("go"), nil, 0o600))
	polltest.Until(t, "the attempt to end", func() bool { return attemptEnded(runner.LogDir(h.dir, task.ID, 1)) })

	h.open()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, runner.Reconcile(ctx, h.eng(), h.dir))
	require.NoError(t, ctx.Err(), "Reconcile did not wait for the network")
	got, err := h.eng().GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status, "left for the gateway")
	require.Equal(t, 1, got.Attempts)
}
