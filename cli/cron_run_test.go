package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/sdk"
)

// TestCronRunWait runs jobs by hand: with no gateway the command hosts
// one, and with one it goes through it.
func TestCronRunWait(t *testing.T) {
	t.Parallel()
	for _, m := range cronHomes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			home := cronHome(t, m.gateway)
			code, _, errOut := run(t, home, "cron", "add", "--name", "hi", "--every", "1h", "--command", "echo hi")
			require.Equal(t, 0, code, errOut)
			code, _, errOut = run(t, home, "cron", "add", "--name", "fails", "--every", "1h", "--command", "echo no >&2; exit 3")
			require.Equal(t, 0, code, errOut)

			code, out, errOut := run(t, home, "cron", "run", "hi", "--wait")
			require.Equal(t, 0, code, errOut)
			require.Regexp(t, `Run cron:[0-9a-f]{12}:\S+ of job [0-9a-f]{12} is running: task \S+`, out)
			require.Contains(t, out, "ended ok")
			runs := cronRunsOf(t, home, "hi")
			require.Len(t, runs, 1)
			require.Equal(t, scheduler.RunOK, runs[0].Status)
			require.Equal(t, scheduler.TriggerManual, runs[0].Trigger)
			require.NotEmpty(t, runs[0].TaskID)
			code, out, _ = run(t, home, "cron", "runs", "hi")
			require.Equal(t, 0, code)
			require.Regexp(t, `ok\s+manual`, out)

			code, out, errOut = run(t, home, "cron", "run", "fails", "--wait", "--json")
			require.Equal(t, 1, code, errOut)
			var r scheduler.Run
			require.NoError(t, json.Unmarshal([]byte(out), &r), out)
			require.Equal(t, scheduler.RunError, r.Status)
			require.Contains(t, errOut, "ended error")
			require.Contains(t, errOut, "exit")

			// Without --wait the command returns at once; a gateway it
			// hosts itself has launched the run's task by then, so the
			// task is not queued again when that gateway stops.
			code, out, errOut = run(t, home, "cron", "run", "hi", "--json")
			require.Equal(t, 0, code, errOut)
			require.NoError(t, json.Unmarshal([]byte(out), &r), out)
			require.Equal(t, scheduler.RunRunning, r.Status)
			if m.gateway {
				return
			}
			code, out, _ = run(t, home, "tasks", "show", r.TaskID, "--json")
			require.Equal(t, 0, code)
			var task apitype.Task
			require.NoError(t, json.Unmarshal([]byte(out), &task))
			require.NotEqual(t, sdk.TaskQueued, task.Status, "the task left the queue before the command returned")
		})
	}
}

// TestCronRunSkipped runs a skip-overlap job by hand while a run of it is
// active: the second run is skipped and says what to do.
func TestCronRunSkipped(t *testing.T) {
	t.Parallel()
	home := cronHome(t, true)
	code, _, errOut := run(t, home, "cron", "add", "--name", "slow", "--every", "1h", "--command", "sleep 30")
	require.Equal(t, 0, code, errOut)
	code, out, errOut := run(t, home, "cron", "run", "slow", "--json")
	require.Equal(t, 0, code, errOut)
	var first scheduler.Run
	require.NoError(t, json.Unmarshal([]byte(out), &first), out)
	t.Cleanup(func() { run(t, home, "tasks", "cancel", first.TaskID) })

	code, out, errOut = run(t, home, "cron", "run", "slow")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, out, "is skipped")
	require.Contains(t, errOut, "was skipped: overlap skip: a run of the job is still active")
	require.Contains(t, errOut, "--overlap allow_all")
}

// TestCronBackfill lists the hours of an hourly job in a past range, and
// runs them one after another through a gateway.
func TestCronBackfill(t *testing.T) {
	t.Parallel()
	home := cronHome(t, true)
	code, _, errOut := run(t, home, "cron", "add", "--name", "hourly", "--cron", "0 * * * *", "--exact", "--command", "echo hi")
	require.Equal(t, 0, code, errOut)
	to := time.Now().UTC().Truncate(time.Minute)
	from := to.Add(-3 * time.Hour)
	var want []time.Time
	for h := from.Truncate(time.Hour).Add(time.Hour); !h.After(to); h = h.Add(time.Hour) {
		want = append(want, h)
	}
	require.Len(t, want, 3)

	code, out, errOut := run(t, home, "cron", "backfill", "hourly", "--from", from.Format("2006-01-02 15:04"), "--to", to.Format(time.RFC3339), "--dry-run", "--json")
	require.Equal(t, 0, code, errOut)
	var plan struct {
		Count  int
		DryRun bool `json:"dry_run"`
		Runs   []scheduler.Run
	}
	require.NoError(t, json.Unmarshal([]byte(out), &plan), out)
	require.True(t, plan.DryRun)
	require.Equal(t, 3, plan.Count)
	for i, r := range plan.Runs {
		require.True(t, want[i].Equal(r.Scheduled), "%s != %s", want[i], r.Scheduled)
		require.Equal(t, scheduler.RunPlanned, r.Status)
	}
	code, out, _ = run(t, home, "cron", "backfill", "hourly", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "--dry-run")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Backfill dry run: 3 scheduled times; nothing ran.")
	require.Contains(t, out, want[0].Format(time.RFC3339)+"  planned  cron:")
	require.Empty(t, cronRunsOf(t, home, "hourly"), "a dry run records nothing")

	code, out, errOut = run(t, home, "cron", "backfill", "hourly", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "--overlap", "buffer_all")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Backfill: 3 scheduled times.")
	require.Eventually(t, func() bool {
		runs := cronRunsOf(t, home, "hourly")
		if len(runs) != 3 {
			return false
		}
		for _, r := range runs {
			if r.Status != scheduler.RunOK {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "every backfilled run ends ok, one after another")
	for _, r := range cronRunsOf(t, home, "hourly") {
		require.Equal(t, scheduler.TriggerBackfill, r.Trigger)
	}

	for name, c := range map[string]struct {
		args []string
		says string
	}{
		"bad from":     {[]string{"--from", "yesterday", "--to", to.Format(time.RFC3339)}, `--from: "yesterday" is not a time`},
		"missing to":   {[]string{"--from", from.Format(time.RFC3339)}, "--to is required"},
		"future to":    {[]string{"--from", from.Format(time.RFC3339), "--to", "2999-01-01 00:00"}, "--to: "},
		"to before":    {[]string{"--from", to.Format(time.RFC3339), "--to", from.Format(time.RFC3339)}, "--to: "},
		"bad overlap":  {[]string{"--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "--overlap", "queue"}, "--overlap"},
		"dry bad from": {[]string{"--from", "x", "--to", to.Format(time.RFC3339), "--dry-run"}, "--from"},
		"no range":     {[]string{}, "--from is required"},
	} {
		code, out, errOut := run(t, home, append([]string{"cron", "backfill", "hourly"}, c.args...)...)
		require.Equal(t, 2, code, "%s: %s", name, errOut)
		require.Empty(t, out, name)
		require.Contains(t, errOut, c.says, name)
	}
	code, _, errOut = run(t, home, "cron", "backfill", "ghost", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339))
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, `no job has id or name "ghost"`)
}

func TestCronRuns(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	code, _, errOut := run(t, home, "cron", "add", "--name", "ping", "--every", "1m", "--command", "echo pong")
	require.Equal(t, 0, code, errOut)
	code, out, _ := run(t, home, "cron", "runs", "ping", "--json")
	require.Equal(t, 0, code)
	require.JSONEq(t, `{"count":0,"runs":[]}`, out)
	code, _, errOut = run(t, home, "cron", "runs", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "nope")
	code, _, _ = run(t, home, "cron", "runs", "ping", "--limit", "-1")
	require.Equal(t, 2, code)
}

func TestCronStatus(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	code, out, _ := run(t, home, "cron", "status")
	require.Equal(t, 0, code)
	require.Equal(t, "Scheduler: stopped; no gateway runs, so no job fires (start one with flowgate gateway)\nCron jobs: 0\n", out)
	code, _, errOut := run(t, home, "cron", "add", "--name", "nightly", "--cron", "0 3 * * *", "--tz", "Europe/Berlin", "--command", "true")
	require.Equal(t, 0, code, errOut)
	code, out, _ = run(t, home, "cron", "status", "--json")
	require.Equal(t, 0, code)
	var st struct {
		Count int
		Jobs  []struct {
			Job    struct{ Name string }
			Active int
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.Equal(t, 1, st.Count)
	require.Equal(t, "nightly", st.Jobs[0].Job.Name)
}

// TestCronSessionCommandJoinsALineage: a command job of session:NAME runs
// in the session's directory under the home and joins its lineage, as a
// pipeline's steps do, so `sessions show` lists it.
func TestCronSessionCommandJoinsALineage(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, _, errOut := run(t, home, "cron", "add", "--name", "notes", "--every", "1h", "--session", "session:research",
		"--command", `pwd > "$FLOWGATE_SESSION_DIR/ran-in"`)
	require.Equal(t, 0, code, errOut)
	code, _, errOut = run(t, home, "cron", "run", "notes", "--wait")
	require.Equal(t, 0, code, errOut)

	dir := filepath.Join(home, "sessions", "research")
	b, err := os.ReadFile(filepath.Join(dir, "ran-in"))
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	require.Contains(t, []string{dir, real}, strings.TrimSpace(string(b)), "the command runs in its session's directory")
	ls := lineages(t, home, "research")
	require.Len(t, ls, 1)
	require.Equal(t, dir, ls[0].Workspace)
	require.Contains(t, ls[0].Steps, "main")
}
