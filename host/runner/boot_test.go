package runner_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// A runner records the machine's boot with each start, which lets the
// task's shim claim the attempt without a sync.
func TestStartsRecordTheBoot(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, shim.BootID(), "this system tells its boot")
	h := startHome(t, nil)
	task := h.create(h.spec("true"))
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.Equal(t, shim.BootID(), got.Boot)
}

// A shim claims an attempt started in its own boot without a sync, so
// after the machine restarted, an attempt of the boot before that shows
// no claim may have run: it is lost, never queued again. One started in
// this boot, or by a gateway that synced every claim (no boot recorded),
// certainly did not run, and is queued again. The maintenance pass sees
// the same (AttemptState).
func TestRecoverUnclaimedAttemptOfAnEarlierBoot(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, shim.BootID(), "this system tells its boot")
	cases := []struct {
		name  string
		boot  string
		retry *sdk.RetryPolicy
		state string
		want  sdk.TaskStatus
		ran   []string
	}{
		{"claims synced", "", nil, runner.AttemptUnclaimed, sdk.TaskSucceeded, []string{"2"}},
		{"this boot", shim.BootID(), nil, runner.AttemptUnclaimed, sdk.TaskSucceeded, []string{"2"}},
		{"an earlier boot", "an-earlier-boot", nil, runner.AttemptGone, sdk.TaskLost, nil},
		{"an earlier boot, safe to repeat", "an-earlier-boot", &sdk.RetryPolicy{SafeToRepeat: true, MaxAttempts: 2, Backoff: sdk.Duration(10 * time.Millisecond)},
			runner.AttemptGone, sdk.TaskSucceeded, []string{"2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHome(t, nil)
			spec := h.spec(`echo "$FLOWGATE_ATTEMPT" >> ran`)
			spec.Retry = c.retry
			queued := h.create(spec)
			task, err := h.eng().StartTask(queued.ID, engine.StartInput{Boot: c.boot})
			require.NoError(t, err)
			// The attempt's files as its gateway made them: a claim its
			// shim may have written is not on the disk.
			dir := runner.LogDir(h.dir, task.ID, task.Attempts)
			require.NoError(t, os.MkdirAll(dir, 0o700))
			require.NoError(t, shim.Prepare(dir))
			require.Equal(t, c.state, runner.AttemptState(h.dir, task))
			h.start()

			got := h.wait(task.ID)
			require.Equal(t, c.want, got.Status, "errors: %q", got.Errors)
			require.Equal(t, c.ran, h.lines("ran"))
			require.NotEmpty(t, got.Errors)
			if c.state == runner.AttemptGone {
				require.Contains(t, got.Errors[0], "attempt 1: lost: the machine restarted")
			} else {
				require.Contains(t, got.Errors[0], "attempt 1 did not run")
			}
		})
	}
}
