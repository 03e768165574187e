package runner_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	patterns := &sdk.RetryPolicy{
		FatalPatterns:     []string{`(?i)permission denied`},
		TransientPatterns: []string{`connection reset`, `HTTP 5\d\d`},
	}
	const (
		fatal     = sdk.FailureFatal
		transient = sdk.FailureTransient
		billing   = sdk.FailureBilling
		startup   = sdk.FailureStartup
		diagnose  = sdk.FailureNeedsDiagnosis
	)
	cases := []struct {
		name     string
		policy   *sdk.RetryPolicy
		code     int
		reason   string
		stderr   string
		stdout   string
		reported bool
		want     sdk.FailureClass
	}{
		{"not executable", patterns, 126, "", "", "", false, fatal},
		{"not found", patterns, 127, "", "", "", false, fatal},
		{"not found beats a transient pattern", patterns, 127, "", "connection reset", "", false, fatal},
		{"not found without a policy", nil, 127, "", "", "", false, fatal},
		{"cancelled", patterns, -1, "cancelled", "", "", false, fatal},
		{"cancelled beats billing", nil, -1, "cancelled", "insufficient_quota", "", false, fatal},
		{"budget exceeded", patterns, -1, "budget-exceeded", "", "", false, fatal},
		{"start failed", nil, 126, "start-failed", "", "", false, fatal},
		{"fatal pattern", patterns, 1, "", "open /x: Permission Denied\n", "", false, fatal},
		{"fatal pattern beats exit 75", patterns, 75, "", "permission denied\n", "", false, fatal},
		{"fatal pattern beats a transient one", patterns, 1, "", "connection reset\npermission denied\n", "", false, fatal},
		{"exit 75", patterns, 75, "", "", "", false, transient},
		{"exit 75 without a policy", nil, 75, "", "", "", false, transient},
		{"transient pattern", patterns, 1, "", "read: connection reset by peer\n", "", true, transient},
		{"second transient pattern", patterns, 2, "", "got HTTP 503\n", "", false, transient},

		// Billing: an explicit code in the error output or the result.
		{"billing: insufficient_quota in stderr", nil, 1, "", `{"error":{"code":"insufficient_quota"}}`, "", true, billing},
		{"billing: hard limit in the result", nil, 1, "", "", `{"error":"billing_hard_limit_reached"}`, true, billing},
		{"billing: credit balance too low", nil, 1, "", "credit_balance_too_low", "", false, billing},
		{"billing: insufficient credits", nil, 1, "", "Error: Insufficient credits for this request", "", false, billing},
		{"billing: insufficient balance", nil, 1, "", "insufficient balance", "", false, billing},
		{"billing beats a 429", nil, 1, "", "HTTP 429: insufficient_quota", "", true, billing},
		{"billing beats exit 75", patterns, 75, "", "insufficient_quota", "", false, billing},
		{"billing beats a fatal pattern", patterns, 1, "", "permission denied; insufficient_quota", "", false, billing},

		// HTTP 429 alone is transient, never billing.
		{"429 alone", nil, 1, "", "HTTP 429 Too Many Requests", "", true, transient},
		{"429 status", nil, 1, "", `{"status": 429}`, "", true, transient},
		{"rate limited", nil, 22, "", "curl: rate limit exceeded", "", true, transient},
		{"429 in a number is not a 429", nil, 1, "", "took 1429ms then failed", "", true, diagnose},

		// DNS or connection refused before the task reported anything.
		{"dns failure at start-up", nil, 6, "", "curl: (6) Could not resolve host: api.example", "", false, startup},
		{"no such host at start-up", nil, 1, "", "dial tcp: lookup api.example: no such host", "", false, startup},
		{"connection refused at start-up", nil, 7, "", "connect: connection refused", "", false, startup},
		{"ECONNREFUSED at start-up", nil, 1, "", "Error: connect ECONNREFUSED 127.0.0.1:443", "", false, startup},
		{"connection refused mid-run", nil, 7, "", "connect: connection refused", "", true, diagnose},
		{"dns failure mid-run", nil, 1, "", "no such host", "", true, diagnose},

		// Mid-run disconnects and anything unknown need a diagnosis.
		{"mid-run disconnect", nil, 1, "", "unexpected EOF: stream closed", "", true, diagnose},
		{"timeout is not fatal", patterns, -1, "timeout", "", "", false, diagnose},
		{"no progress is not fatal", patterns, -1, "no-progress", "", "", false, diagnose},
		{"killed", patterns, -1, "", "", "", false, diagnose},
		{"other exit code", patterns, 1, "", "something else\n", "", false, diagnose},
		{"no policy", nil, 1, "", "connection reset", "", false, diagnose},
	}
	c, err := runner.NewClassifier(nil)
	require.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := c.Classify(runner.Failure{Policy: tc.policy, ExitCode: tc.code, Reason: tc.reason,
				Stderr: tc.stderr, Stdout: tc.stdout, Reported: tc.reported})
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}

	t.Run("bad pattern", func(t *testing.T) {
		t.Parallel()
		for _, p := range []*sdk.RetryPolicy{
			{FatalPatterns: []string{`ok`, `(unclosed`}},
			{TransientPatterns: []string{`(unclosed`}},
		} {
			_, err := c.Classify(runner.Failure{Policy: p, ExitCode: 1, Stderr: "whatever"})
			require.ErrorContains(t, err, "(unclosed")
		}
	})
}

// TestClassifyPerRuntime: a runtime's patterns in the gateway config
// replace the defaults of that kind for that runtime only; an empty list
// turns a default off.
func TestClassifyPerRuntime(t *testing.T) {
	t.Parallel()
	c, err := runner.NewClassifier(map[string]runner.FailurePatterns{
		"agent": {Billing: []string{`PAYMENT_REQUIRED`}, Transient: []string{}},
	})
	require.NoError(t, err)
	cases := []struct {
		runtime, stderr string
		want            sdk.FailureClass
	}{
		{"agent", "PAYMENT_REQUIRED", sdk.FailureBilling},
		{"cli", "PAYMENT_REQUIRED", sdk.FailureNeedsDiagnosis},
		{"agent", "insufficient_quota", sdk.FailureNeedsDiagnosis},
		{"agent", "HTTP 429", sdk.FailureNeedsDiagnosis},
		{"cli", "HTTP 429", sdk.FailureTransient},
		{"agent", "connection refused", sdk.FailureStartup},
	}
	for _, tc := range cases {
		got, err := c.Classify(runner.Failure{Runtime: tc.runtime, ExitCode: 1, Stderr: tc.stderr})
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s: %q", tc.runtime, tc.stderr)
	}

	_, err = runner.NewClassifier(map[string]runner.FailurePatterns{"agent": {Startup: []string{`(bad`}}})
	require.ErrorContains(t, err, "runtime agent: startup pattern \"(bad\"")
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	almostOne := 1 - 1e-12
	p := &sdk.RetryPolicy{Backoff: sdk.Duration(100 * ms), MaxBackoff: sdk.Duration(time.Second)}
	cases := []struct {
		name   string
		policy *sdk.RetryPolicy
		n      int
		u      float64
		want   time.Duration
	}{
		{"first, least jitter", p, 1, 0, 75 * ms},
		{"first, middle", p, 1, 0.5, 100 * ms},
		{"second doubles", p, 2, 0.5, 200 * ms},
		{"third doubles again", p, 3, 0.5, 400 * ms},
		{"capped", p, 5, 0.5, time.Second},
		{"capped, least jitter", p, 30, 0, 750 * ms},
		{"n below 1 counts as 1", p, 0, 0.5, 100 * ms},
		{"default base", nil, 1, 0.5, runner.DefaultBackoff},
		{"default base doubles", &sdk.RetryPolicy{MaxAttempts: 5}, 3, 0.5, 4 * runner.DefaultBackoff},
		{"default cap", nil, 40, 0.5, runner.DefaultMaxBackoff},
		{"default cap, least jitter", nil, 1000, 0, runner.DefaultMaxBackoff * 3 / 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, runner.Backoff(c.policy, c.n, c.u))
		})
	}

	t.Run("bounds", func(t *testing.T) {
		t.Parallel()
		for n := 1; n <= 12; n++ {
			nominal := min(100*ms<<(n-1), time.Second)
			for _, u := range []float64{0, 0.5, almostOne} {
				d := runner.Backoff(p, n, u)
				require.GreaterOrEqual(t, d, nominal*3/4, "n=%d u=%v", n, u)
				require.Less(t, d, nominal*5/4, "n=%d u=%v", n, u)
				require.Less(t, d, time.Duration(p.MaxBackoff)*5/4, "n=%d u=%v", n, u)
			}
			require.Greater(t, runner.Backoff(p, n, almostOne), nominal*5/4-ms, "n=%d", n)
		}
	})
}

// retryHome runs tasks with a fixed jitter, so a backoff is its nominal
// delay.
func retryHome(t *testing.T) *home {
	return startHome(t, func(c *runner.Config) { c.Rand = func() float64 { return 0.5 } })
}

func TestRetry(t *testing.T) {
	t.Parallel()
	policy := func(max int) *sdk.RetryPolicy {
		return &sdk.RetryPolicy{MaxAttempts: max, Backoff: sdk.Duration(10 * time.Millisecond)}
	}

	t.Run("transient then success", func(t *testing.T) {
		t.Parallel()
		h := retryHome(t)
		spec := h.spec(`echo "$FLOWGATE_ATTEMPT" >> ran; if [ "$FLOWGATE_ATTEMPT" = 1 ]; then echo 'try later' >&2; exit 75; fi; echo ok`)
		spec.Retry = policy(3)
		task := h.create(spec)
		got := h.wait(task.ID)
		require.Equal(t, task.ID, got.ID)
		require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
		require.Equal(t, 2, got.Attempts)
		require.Equal(t, 0, *got.ExitCode)
		require.Equal(t, "ok", got.Result.Summary)
		require.Len(t, got.Errors, 1)
		require.Contains(t, got.Errors[0], "attempt 1")
		require.Contains(t, got.Errors[0], "exit code 75")
		require.Contains(t, got.Errors[0], "transient")
		require.Contains(t, got.Errors[0], "try later")
		require.Equal(t, []string{"1", "2"}, h.lines("ran"))
		tasks, err := h.eng().FlowTasks(task.FlowID)
		require.NoError(t, err)
		require.Len(t, tasks, 1, "a retry is the same task, not a new one")
		for n := 1; n <= 2; n++ {
			require.True(t, attemptEnded(runner.LogDir(h.dir, task.ID, n)), "attempt %d has no status", n)
		}
	})

	t.Run("fatal is not retried", func(t *testing.T) {
		t.Parallel()
		h := retryHome(t)
		spec := h.spec(`echo x >> ran; exit 127`)
		spec.Retry = policy(3)
		got := h.wait(h.create(spec).ID)
		require.Equal(t, sdk.TaskFailed, got.Status)
		require.Equal(t, 1, got.Attempts)
		require.Equal(t, 127, *got.ExitCode)
		require.Len(t, got.Errors, 1)
		require.Equal(t, []string{"x"}, h.lines("ran"))
	})

	t.Run("missing command is not retried", func(t *testing.T) {
		t.Parallel()
		h := retryHome(t)
		got := h.wait(h.create(sdk.TaskSpec{Argv: []string{"flowgate-test-no-such-command"}, Retry: policy(3)}).ID)
		require.Equal(t, sdk.TaskFailed, got.Status)
		require.Equal(t, 1, got.Attempts)
		require.Equal(t, "start-failed", got.Reason)
	})

	t.Run("unknown until attempts run out", func(t *testing.T) {
		t.Parallel()
		h := retryHome(t)
		spec := h.spec(`echo "$FLOWGATE_ATTEMPT" >> ran; echo "failing $FLOWGATE_ATTEMPT" >&2; exit 1`)
		spec.Retry = policy(3)
		got := h.wait(h.create(spec).ID)
		require.Equal(t, sdk.TaskFailed, got.Status)
		require.Equal(t, 3, got.Attempts)
		require.Equal(t, 1, *got.ExitCode)
		require.Equal(t, []string{"1", "2", "3"}, h.lines("ran"))
		require.Len(t, got.Errors, 3)
		for i, e := range got.Errors[:2] {
			require.Contains(t, e, "needs_diagnosis failure; retrying in")
			require.Contains(t, e, "failing "+string(rune('1'+i)))
		}
		require.NotContains(t, got.Errors[2], "retrying")
		require.Contains(t, got.Errors[2], "failing 3")
	})

	t.Run("no policy runs once", func(t *testing.T) {
		t.Parallel()
		h := retryHome(t)
		got := h.wait(h.create(h.spec(`echo x >> ran; exit 75`)).ID)
		require.Equal(t, sdk.TaskFailed, got.Status)
		require.Equal(t, 1, got.Attempts)
		require.Equal(t, 75, *got.ExitCode)
		require.Equal(t, []string{"x"}, h.lines("ran"))
	})

	t.Run("timeout is retried", func(t *testing.T) {
		t.Parallel()
		h := retryHome(t)
		spec := h.spec(`echo x >> ran; if [ "$FLOWGATE_ATTEMPT" = 1 ]; then sleep 30; fi`)
		spec.Timeout = sdk.Duration(300 * time.Millisecond)
		spec.Retry = policy(2)
		got := h.wait(h.create(spec).ID)
		require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
		require.Equal(t, 2, got.Attempts)
		require.Empty(t, got.Reason)
		require.Equal(t, []string{"x", "x"}, h.lines("ran"))
	})
}
