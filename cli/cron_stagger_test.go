package cli_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
)

// staggeredJob is a job as cron show --json prints it.
type staggeredJob struct {
	scheduler.Job
	Stagger *struct {
		Window, Offset string
		Default        bool
	}
}

// TestCronStaggerShownAndApplied: through a running gateway, an @hourly
// job gets the default stagger, its next run is the hour plus the offset
// its id picks, and cron show and cron list say so in text and JSON;
// --exact keeps the times as written, --stagger sets the window, and bad
// stagger flags are refused, changing nothing.
func TestCronStaggerShownAndApplied(t *testing.T) {
	t.Parallel()
	home := cronHome(t, true)
	code, out, errOut := run(t, home, "cron", "add", "--name", "hourly", "--cron", "@hourly", "--command", "true", "--json")
	require.Equal(t, 0, code, errOut)
	j := cronJob(t, out)
	off := schedule.StaggerOffset(j.ID, schedule.DefaultStagger)
	require.Equal(t, off, j.State.NextRun.Sub(j.State.NextRun.Truncate(time.Hour)), "next run %s", j.State.NextRun)

	code, out, errOut = run(t, home, "cron", "show", "hourly", "--json")
	require.Equal(t, 0, code, errOut)
	var shown staggeredJob
	require.NoError(t, json.Unmarshal([]byte(out), &shown), out)
	require.NotNil(t, shown.Stagger, out)
	require.Equal(t, "5m0s", shown.Stagger.Window)
	require.Equal(t, off.String(), shown.Stagger.Offset)
	require.True(t, shown.Stagger.Default)
	require.True(t, j.State.NextRun.Equal(shown.State.NextRun))

	code, out, _ = run(t, home, "cron", "show", "hourly")
	require.Equal(t, 0, code)
	require.Contains(t, out, off.String()+" after each time (this job's offset within 5m0s: the default for a schedule at minute 0; --exact for none)")

	code, out, errOut = run(t, home, "cron", "add", "--name", "exact", "--cron", "0 * * * *", "--exact", "--command", "true", "--json")
	require.Equal(t, 0, code, errOut)
	exact := cronJob(t, out)
	require.Equal(t, exact.State.NextRun.Truncate(time.Hour), exact.State.NextRun, "--exact: on the hour")

	code, out, errOut = run(t, home, "cron", "add", "--name", "wide", "--cron", "30 * * * *", "--stagger", "20m", "--command", "true")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "next run")

	code, out, errOut = run(t, home, "cron", "list", "--json")
	require.Equal(t, 0, code, errOut)
	var l struct{ Jobs []staggeredJob }
	require.NoError(t, json.Unmarshal([]byte(out), &l), out)
	stagger := map[string]string{}
	for _, lj := range l.Jobs {
		if lj.Stagger != nil {
			stagger[lj.Name] = lj.Stagger.Window
		}
	}
	require.Equal(t, map[string]string{"hourly": "5m0s", "wide": "20m0s"}, stagger)
	code, out, _ = run(t, home, "cron", "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "@hourly (+"+off.String()+")")

	code, out, errOut = run(t, home, "cron", "edit", "hourly", "--exact", "--json")
	require.Equal(t, 0, code, errOut)
	edited := cronJob(t, out)
	require.Equal(t, edited.State.NextRun.Truncate(time.Hour), edited.State.NextRun, "edit --exact: on the hour")

	before := cronCount(t, home)
	for _, argv := range [][]string{
		{"cron", "add", "--name", "bad", "--every", "1h", "--stagger", "5m", "--command", "true"},
		{"cron", "add", "--name", "bad", "--cron", "@daily", "--stagger", "5m", "--exact", "--command", "true"},
		{"cron", "add", "--name", "bad", "--cron", "@daily", "--stagger", "soon", "--command", "true"},
	} {
		code, _, errOut := run(t, home, argv...)
		require.Equal(t, 2, code, "%v: %s", argv, errOut)
		require.Regexp(t, `--(stagger|exact): `, errOut)
	}
	require.Equal(t, before, cronCount(t, home), "a refused add stores nothing")
	code, _, errOut = run(t, home, "cron", "edit", "wide", "--every", "1h", "--stagger", "5m")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "--stagger: applies only to --cron")
	code, out, errOut = run(t, home, "cron", "show", "wide", "--json")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, scheduler.Duration(20*time.Minute), cronJob(t, out).Schedule.Stagger, "a refused edit changes nothing")
}
