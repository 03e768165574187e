package runner_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	text := h.create(h.spec(`printf 'first line\nlast line\n'`))
	doc := h.create(h.spec(`printf '{\n  "n": 1,\n  "s": "x"\n}\n'`))
	failed := h.create(h.spec(`echo working; echo 'first complaint' >&2; echo 'disk on fire' >&2; exit 3`))
	missing := h.create(sdk.TaskSpec{Argv: []string{"flowgate-test-no-such-command", "--flag"}})

	got := h.wait(text.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	require.NotNil(t, got.ExitCode)
	require.Equal(t, 0, *got.ExitCode)
	require.Empty(t, got.Reason)
	require.Empty(t, got.Errors)
	require.Equal(t, 1, got.Attempts)
	require.Equal(t, &sdk.Result{
		StdoutSHA256: sha("first line\nlast line\n"), StdoutBytes: int64(len("first line\nlast line\n")),
		Stdout: "first line\nlast line\n", Summary: "last line",
	}, got.Result)
	require.False(t, got.EndedAt.Before(got.StartedAt))

	got = h.wait(doc.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	out := "{\n  \"n\": 1,\n  \"s\": \"x\"\n}\n"
	require.Equal(t, sha(out), got.Result.StdoutSHA256)
	require.Equal(t, int64(len(out)), got.Result.StdoutBytes)
	require.JSONEq(t, `{"n":1,"s":"x"}`, string(got.Result.JSON))
	require.Equal(t, "}", got.Result.Summary)

	got = h.wait(failed.ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.NotNil(t, got.ExitCode)
	require.Equal(t, 3, *got.ExitCode)
	require.Equal(t, 1, got.Attempts)
	require.Len(t, got.Errors, 1)
	require.Contains(t, got.Errors[0], "exit code 3")
	require.Contains(t, got.Errors[0], "disk on fire")
	require.NotContains(t, got.Errors[0], "first complaint")
	require.Equal(t, "working", got.Result.Summary)
	require.Nil(t, got.Result.JSON)

	got = h.wait(missing.ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.NotNil(t, got.ExitCode)
	require.Equal(t, 127, *got.ExitCode)
	require.Equal(t, "start-failed", got.Reason)
	require.Len(t, got.Errors, 1)
	require.Contains(t, got.Errors[0], "flowgate-test-no-such-command")

	// The failures leave the engine and the runner as they were.
	next := h.wait(h.create(h.spec("echo still here")).ID)
	require.Equal(t, sdk.TaskSucceeded, next.Status)
	require.Equal(t, "still here", next.Result.Summary)
	polltest.Until(t, "the runner to let go of the task", func() bool { return h.gw.run.Running() == 0 })
}

func TestBudgets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		spec   func(h *home) sdk.TaskSpec
		status sdk.TaskStatus
		reason string
	}{
		{"timeout", func(h *home) sdk.TaskSpec {
			s := h.spec("sleep 30")
			s.Timeout = sdk.Duration(300 * time.Millisecond)
			return s
		}, sdk.TaskTimedOut, "timeout"},
		{"max budget", func(h *home) sdk.TaskSpec {
			s := h.spec("sleep 30")
			s.MaxBudget = sdk.Duration(300 * time.Millisecond)
			return s
		}, sdk.TaskTimedOut, "budget-exceeded"},
		{"no progress", func(h *home) sdk.TaskSpec {
			s := h.spec(`echo '{"fraction":0.1}' >> "$FLOWGATE_PROGRESS"; sleep 30`)
			s.NoProgressBudget = sdk.Duration(300 * time.Millisecond)
			return s
		}, sdk.TaskTimedOut, "no-progress"},
		{"no progress ever reported", func(h *home) sdk.TaskSpec {
			s := h.spec("sleep 0.6; echo fine")
			s.NoProgressBudget = sdk.Duration(100 * time.Millisecond)
			return s
		}, sdk.TaskSucceeded, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := startHome(t, nil)
			got := h.wait(h.create(c.spec(h)).ID)
			require.Equal(t, c.status, got.Status, "errors: %q", got.Errors)
			require.Equal(t, c.reason, got.Reason)
			require.Equal(t, 1, got.Attempts)
			if c.status != sdk.TaskSucceeded {
				require.Len(t, got.Errors, 1)
				require.Contains(t, got.Errors[0], "stopped")
			}
		})
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	for _, c := range []struct {
		cfg  runner.Config
		want string
	}{
		{runner.Config{}, "Home"},
		{runner.Config{Home: h.dir, MaxRunning: -1}, "MaxRunning"},
		{runner.Config{Home: h.dir, Poll: -time.Second}, "Poll"},
	} {
		_, err := runner.New(h.eng(), c.cfg)
		require.ErrorContains(t, err, c.want)
	}
	def := runner.Config{Home: h.dir}.WithDefaults()
	require.Equal(t, 8, def.MaxRunning)
	require.Equal(t, 100*time.Millisecond, def.Poll)
	require.Equal(t, 5*time.Second, def.Grace)
	require.NotNil(t, def.Now)
	require.NotNil(t, def.Rand)
	require.NotNil(t, def.Launch)
	require.NotNil(t, def.Logger)

	// Start and Stop are idempotent.
	ctx := context.Background()
	require.NoError(t, h.gw.run.Start(ctx))
	require.NoError(t, h.gw.run.Start(ctx))
	require.NoError(t, h.gw.run.Stop(ctx))
	require.NoError(t, h.gw.run.Stop(ctx))
	require.NoError(t, h.gw.run.Start(ctx))
	got := h.wait(h.create(h.spec("true")).ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	require.Equal(t, 8, h.gw.run.MaxRunning())
}

// A task without a command is someone else's to run: the runner leaves it
// alone, queued or running.
func TestTaskWithoutCommandIsLeftAlone(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	queued, _, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "t", Runtime: "agent"})
	require.NoError(t, err)
	run := h.wait(h.create(h.spec("true")).ID) // dispatched after the first
	require.Equal(t, sdk.TaskSucceeded, run.Status)
	h.restart()
	got, err := h.eng().GetTask(queued.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, got.Status)
	require.Zero(t, got.Attempts)
}

func TestInputTextIsFedToStdin(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(sdk.TaskSpec{Argv: []string{"tr", "a-z", "A-Z"}, Input: "from the last step\n"})
	done := h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, done.Status)
	require.Equal(t, "FROM THE LAST STEP", done.Result.Summary)
}
