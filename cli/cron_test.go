package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
)

// writeWorkflow writes a small valid workflow file and returns its path.
func writeWorkflow(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nightly.lobster")
	require.NoError(t, os.WriteFile(p, []byte("name: nightly\nsteps:\n  - id: build\n    run: echo building\n"), 0o600))
	return p
}

func cronJob(t *testing.T, out string) scheduler.Job {
	t.Helper()
	var j scheduler.Job
	require.NoError(t, json.Unmarshal([]byte(out), &j), out)
	return j
}

func cronCount(t *testing.T, home string) int {
	t.Helper()
	code, out, errOut := run(t, home, "cron", "list", "--all", "--json")
	require.Equal(t, 0, code, errOut)
	var l struct{ Count int }
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	return l.Count
}

func TestCronRoundTrip(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	wf := writeWorkflow(t)

	code, out, errOut := run(t, home, "cron", "add", "--name", "nightly", "--cron", "30 2 * * *", "--tz", "Europe/Berlin",
		"--pipeline", wf, "--args-json", `{"env":"prod"}`, "--overlap", "buffer_one", "--catchup-window", "6h",
		"--webhook", "https://example.com/hook", "--failure-alert-after", "3", "--json")
	require.Equal(t, 0, code, errOut)
	j := cronJob(t, out)
	require.Len(t, j.ID, 12)
	require.True(t, j.Enabled)
	require.Equal(t, schedule.KindCron, j.Schedule.Kind)
	require.Equal(t, "Europe/Berlin", j.Schedule.TZ)
	require.Equal(t, scheduler.PayloadPipeline, j.Payload.Kind)
	require.True(t, filepath.IsAbs(j.Payload.Pipeline))
	require.JSONEq(t, `{"env":"prod"}`, string(j.Payload.Args))
	require.Equal(t, scheduler.SessionIsolated, j.Session)
	require.Equal(t, schedule.OverlapBufferOne, j.Overlap)
	require.Equal(t, scheduler.Duration(6*time.Hour), j.CatchUpWindow)
	require.Equal(t, scheduler.DeliveryWebhook, j.Delivery.Kind)
	require.Equal(t, scheduler.FailureAlert{After: 3, Cooldown: scheduler.Duration(time.Hour)}, j.FailureAlert)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	next := j.State.NextRun.In(berlin)
	require.True(t, next.After(time.Now()))
	require.Equal(t, 30, next.Minute())

	code, out, errOut = run(t, home, "cron", "add", "--name", "tick", "--every", "15m", "--command", "echo tick", "--session", "session:ops")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Added cron job")
	require.Contains(t, out, "every 15m0s")

	code, out, errOut = run(t, home, "cron", "show", "tick", "--json")
	require.Equal(t, 0, code, errOut)
	sooner, later := "tick", "Europe/Berlin" // every 15m is sooner, but for the quarter hour before 02:30 Berlin
	if j.State.NextRun.Before(cronJob(t, out).State.NextRun) {
		sooner, later = "Europe/Berlin", "tick"
	}
	code, out, _ = run(t, home, "cron", "list")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "Cron jobs: 2", lines[0])
	require.Regexp(t, `^ID\s+Name\s+Schedule\s+TZ\s+Next run\s+Last status\s+Enabled\s+Announce to$`, lines[1])
	require.Contains(t, lines[2], sooner, "the sooner job is listed first")
	require.Contains(t, lines[3], later)
	col := strings.Index(lines[1], "Next run")
	for _, l := range lines[2:] {
		require.NotEqual(t, ' ', l[col], "columns are aligned: %q", l)
	}

	code, out, _ = run(t, home, "cron", "show", "nightly")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Cron job:")
	require.Contains(t, out, j.ID)
	require.Contains(t, out, "webhook https://example.com/hook")
	require.Contains(t, out, "after 3 consecutive failures")

	code, out, errOut = run(t, home, "cron", "edit", j.ID, "--cron", "0 5 * * *", "--command", "make nightly", "--json")
	require.Equal(t, 0, code, errOut)
	e := cronJob(t, out)
	require.Equal(t, "Europe/Berlin", e.Schedule.TZ, "a new --cron keeps the zone")
	require.Equal(t, 5, e.State.NextRun.In(berlin).Hour(), "next run is recomputed")
	require.Equal(t, scheduler.PayloadCommand, e.Payload.Kind)
	require.Empty(t, e.Payload.Pipeline)
	require.Equal(t, j.CreatedAt.UTC(), e.CreatedAt.UTC())
	require.Equal(t, schedule.OverlapBufferOne, e.Overlap, "unchanged flags are kept")

	code, out, errOut = run(t, home, "cron", "edit", "nightly", "--tz", "America/New_York", "--json")
	require.Equal(t, 0, code, errOut)
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	require.Equal(t, 5, cronJob(t, out).State.NextRun.In(ny).Hour())

	code, _, errOut = run(t, home, "cron", "edit", "nightly", "--name", "tick")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `a job named "tick" exists`)

	code, out, errOut = run(t, home, "cron", "disable", "nightly", "--json")
	require.Equal(t, 0, code, errOut)
	d := cronJob(t, out)
	require.False(t, d.Enabled)
	require.True(t, d.State.NextRun.IsZero(), "a disabled job has no next run")
	require.NotContains(t, out, "next_run")

	code, out, _ = run(t, home, "cron", "list", "--json")
	require.Equal(t, 0, code)
	require.NotContains(t, out, j.ID, "list hides disabled jobs")
	code, out, _ = run(t, home, "cron", "list", "--all")
	require.Equal(t, 0, code)
	require.Contains(t, out, "disabled")

	code, out, errOut = run(t, home, "cron", "edit", "nightly", "--overlap", "skip", "--json")
	require.Equal(t, 0, code, errOut)
	require.True(t, cronJob(t, out).State.NextRun.IsZero(), "editing a disabled job leaves it without a next run")

	code, out, errOut = run(t, home, "cron", "enable", "nightly", "--json")
	require.Equal(t, 0, code, errOut)
	require.False(t, cronJob(t, out).State.NextRun.IsZero())

	code, out, errOut = run(t, home, "cron", "rm", "nightly")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Removed cron job "+j.ID)
	code, _, errOut = run(t, home, "cron", "show", j.ID)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "not found")
	require.Equal(t, 1, cronCount(t, home))

	code, _, errOut = run(t, home, "cron", "add", "--name", "nightly", "--at", "+1h", "--command", "true", "--delete-after-run")
	require.Equal(t, 0, code, "the name is free again: %s", errOut)
}

func TestCronAddRefusesInvalidInput(t *testing.T) {
	t.Parallel()
	for _, m := range cronHomes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			testCronAddRefusesInvalidInput(t, cronHome(t, m.gateway))
		})
	}
}

// testCronAddRefusesInvalidInput requires every invalid add to exit 2
// naming the flag at fault, and to create nothing.
func testCronAddRefusesInvalidInput(t *testing.T, home string) {
	wf := writeWorkflow(t)
	bad := filepath.Join(t.TempDir(), "bad.lobster")
	require.NoError(t, os.WriteFile(bad, []byte("name: bad\nsteps: 3\n"), 0o600))
	code, _, errOut := run(t, home, "cron", "add", "--name", "taken", "--every", "1h", "--command", "true")
	require.Equal(t, 0, code, errOut)

	cmd := []string{"--command", "true"}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"bad cron field", append([]string{"--name", "x", "--cron", "61 * * * *"}, cmd...), []string{"--cron", "minute field"}},
		{"bad cron field count", append([]string{"--name", "x", "--cron", "* * *"}, cmd...), []string{"--cron", "3 fields"}},
		{"bad day of week", append([]string{"--name", "x", "--cron", "0 9 * * mon-xyz"}, cmd...), []string{"--cron", "day of week"}},
		{"unknown zone", append([]string{"--name", "x", "--cron", "0 9 * * *", "--tz", "Mars/Olympus"}, cmd...), []string{"--tz", "Mars/Olympus"}},
		{"tz with every", append([]string{"--name", "x", "--every", "1h", "--tz", "UTC"}, cmd...), []string{"--tz", "--every"}},
		{"both payloads", []string{"--name", "x", "--every", "1h", "--pipeline", wf, "--command", "true"}, []string{"--command", "--pipeline"}},
		{"no payload", []string{"--name", "x", "--every", "1h"}, []string{"--pipeline", "payload is required"}},
		{"no schedule", append([]string{"--name", "x"}, cmd...), []string{"flowgate: one of --cron, --every or --at is required"}},
		{"two schedules", append([]string{"--name", "x", "--every", "1h", "--at", "+1h"}, cmd...), []string{"--at", "exactly one schedule"}},
		{"past at", append([]string{"--name", "x", "--at", "2020-01-01T00:00:00Z"}, cmd...), []string{"--at", "in the past"}},
		{"bad at", append([]string{"--name", "x", "--at", "tomorrowish"}, cmd...), []string{"--at", "not a time"}},
		{"bad every", append([]string{"--name", "x", "--every", "often"}, cmd...), []string{"--every", "not a duration"}},
		{"bad overlap", append([]string{"--name", "x", "--every", "1h", "--overlap", "queue"}, cmd...), []string{"--overlap", "queue"}},
		{"bad dst", append([]string{"--name", "x", "--cron", "0 9 * * *", "--dst", "maybe"}, cmd...), []string{"--dst"}},
		{"dst with every", append([]string{"--name", "x", "--every", "1h", "--dst", "skip"}, cmd...), []string{"--dst", "--every"}},
		{"bad catchup window", append([]string{"--name", "x", "--every", "1h", "--catchup-window", "-5m"}, cmd...), []string{"--catchup-window"}},
		{"catchup window with at", append([]string{"--name", "x", "--at", "+1h", "--catchup-window", "5m"}, cmd...), []string{"--catchup-window", "--at"}},
		{"bad args json", []string{"--name", "x", "--every", "1h", "--pipeline", wf, "--args-json", "[1,2]"}, []string{"--args-json", "JSON object"}},
		{"args json without pipeline", append([]string{"--name", "x", "--every", "1h", "--args-json", "{}"}, cmd...), []string{"--args-json", "needs --pipeline"}},
		{"missing name", append([]string{"--every", "1h"}, cmd...), []string{"--name", "required"}},
		{"blank name", append([]string{"--name", "  ", "--every", "1h"}, cmd...), []string{"--name", "required"}},
		{"duplicate name", append([]string{"--name", "taken", "--every", "1h"}, cmd...), []string{"--name", `"taken" exists`, "cron edit"}},
		{"webhook not http", append([]string{"--name", "x", "--every", "1h", "--webhook", "ftp://example.com/x"}, cmd...), []string{"--webhook", "http or https"}},
		{"two deliveries", append([]string{"--name", "x", "--every", "1h", "--webhook", "https://example.com", "--notify-command", "cat"}, cmd...), []string{"--notify-command", "--webhook"}},
		{"negative alert threshold", append([]string{"--name", "x", "--every", "1h", "--failure-alert-after", "-1"}, cmd...), []string{"--failure-alert-after", "-1"}},
		{"alert cooldown without threshold", append([]string{"--name", "x", "--every", "1h", "--failure-alert-cooldown", "1h"}, cmd...), []string{"--failure-alert-cooldown", "--failure-alert-after"}},
		{"bad alert cooldown", append([]string{"--name", "x", "--every", "1h", "--failure-alert-after", "2", "--failure-alert-cooldown", "soon"}, cmd...), []string{"--failure-alert-cooldown", "soon"}},
		{"alert with nowhere to go", append([]string{"--name", "x", "--every", "1h", "--failure-alert-after", "2"}, cmd...), []string{"--failure-alert-after", "somewhere to go"}},
		{"alert webhook without threshold", append([]string{"--name", "x", "--every", "1h", "--failure-alert-webhook", "https://example.com/a"}, cmd...), []string{"--failure-alert-webhook", "--failure-alert-after"}},
		{"bad alert webhook", append([]string{"--name", "x", "--every", "1h", "--failure-alert-after", "1", "--failure-alert-webhook", "ftp://x"}, cmd...), []string{"--failure-alert-webhook", "ftp://x"}},
		{"delete after run without at", append([]string{"--name", "x", "--every", "1h", "--delete-after-run"}, cmd...), []string{"--delete-after-run", "--at"}},
		{"bad session", append([]string{"--name", "x", "--every", "1h", "--session", "shared"}, cmd...), []string{"--session", "session:NAME"}},
		{"empty session name", append([]string{"--name", "x", "--every", "1h", "--session", "session:"}, cmd...), []string{"--session"}},
		{"missing pipeline file", []string{"--name", "x", "--every", "1h", "--pipeline", filepath.Join(t.TempDir(), "nope.lobster")}, []string{"--pipeline", "nope.lobster"}},
		{"invalid workflow", []string{"--name", "x", "--every", "1h", "--pipeline", bad}, []string{"--pipeline", "bad.lobster:"}},
		{"stray argument", append([]string{"extra", "--name", "x", "--every", "1h"}, cmd...), []string{"no arguments"}},
		{"unknown flag", append([]string{"--name", "x", "--every", "1h", "--retries", "3"}, cmd...), []string{"--retries"}},
	}
	require.GreaterOrEqual(t, len(cases), 20)
	for _, c := range cases {
		code, out, errOut := run(t, home, append([]string{"cron", "add"}, c.args...)...)
		require.Equal(t, 2, code, "%s: %s", c.name, errOut)
		require.Empty(t, out, c.name)
		for _, w := range c.want {
			require.Contains(t, errOut, w, c.name)
		}
	}
	require.Equal(t, 1, cronCount(t, home), "no invalid add created a job")
}

func TestCronEditAndEnableRefusals(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	code, out, errOut := run(t, home, "cron", "add", "--name", "once", "--at", "+1h", "--command", "true", "--json")
	require.Equal(t, 0, code, errOut)
	j := cronJob(t, out)

	code, _, errOut = run(t, home, "cron", "edit", "once", "--tz", "UTC")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--tz: applies only to a --cron schedule")

	code, _, errOut = run(t, home, "cron", "edit", "once", "--args-json", "{}")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--args-json: needs --pipeline")

	code, out, errOut = run(t, home, "cron", "edit", "once", "--every", "1h", "--json")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, schedule.KindEvery, cronJob(t, out).Schedule.Kind)

	for _, verb := range []string{"show", "edit", "enable", "disable", "rm"} {
		code, _, errOut = run(t, home, "cron", verb, "ghost")
		require.Equal(t, 1, code, verb)
		require.Contains(t, errOut, `no job has id or name "ghost"`, verb)
	}
	code, _, _ = run(t, home, "cron", "show", j.ID)
	require.Equal(t, 0, code)
}

// startGateway runs a gateway on home until the test ends.
func startGateway(t *testing.T, home string) {
	t.Helper()
	serveGateway(t, gateway.Config{Home: home, Owner: "cli test gateway"})
}

// serveGateway starts a gateway of cfg in this process and stops it when
// the test ends.
func serveGateway(t *testing.T, cfg gateway.Config) *gateway.Gateway {
	t.Helper()
	g, err := gateway.New(cfg)
	require.NoError(t, err)
	require.NoError(t, g.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, g.Stop(ctx))
	})
	return g
}

// cronHomes are the two ways the cron commands reach the jobs: the store
// opened by the command, and a running gateway.
var cronHomes = []struct {
	name    string
	gateway bool
}{{"without gateway", false}, {"through gateway", true}}

// cronHome returns a fresh home, with a gateway running on it if asked.
func cronHome(t *testing.T, withGateway bool) string {
	t.Helper()
	home := shortHome(t)
	if withGateway {
		startGateway(t, home)
	}
	return home
}

func cronRunsOf(t *testing.T, home, job string) []scheduler.Run {
	t.Helper()
	code, out, errOut := run(t, home, "cron", "runs", job, "--json")
	require.Equal(t, 0, code, errOut)
	var l struct{ Runs []scheduler.Run }
	require.NoError(t, json.Unmarshal([]byte(out), &l), out)
	return l.Runs
}

// TestCronCommandsWithAndWithoutGateway runs every job command through a
// running gateway and through the store, with the same results.
func TestCronCommandsWithAndWithoutGateway(t *testing.T) {
	t.Parallel()
	for _, m := range cronHomes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			home := cronHome(t, m.gateway)
			wf := writeWorkflow(t)

			code, out, errOut := run(t, home, "cron", "add", "--name", "nightly", "--cron", "30 2 * * *", "--tz", "Europe/Berlin",
				"--pipeline", wf, "--args-json", `{"env":"prod"}`, "--json")
			require.Equal(t, 0, code, errOut)
			j := cronJob(t, out)
			require.True(t, filepath.IsAbs(j.Payload.Pipeline))
			require.JSONEq(t, `{"env":"prod"}`, string(j.Payload.Args))

			code, _, errOut = run(t, home, "cron", "add", "--name", "nightly", "--every", "1h", "--command", "true")
			require.Equal(t, 2, code)
			require.Contains(t, errOut, `--name: a job named "nightly" exists`)

			code, out, _ = run(t, home, "cron", "list")
			require.Equal(t, 0, code)
			require.Contains(t, out, "Cron jobs: 1")
			require.Contains(t, out, "Europe/Berlin")

			code, out, _ = run(t, home, "cron", "show", "nightly", "--json")
			require.Equal(t, 0, code)
			require.Equal(t, j, cronJob(t, out))

			code, out, errOut = run(t, home, "cron", "edit", "nightly", "--command", "make nightly", "--overlap", "buffer_one", "--json")
			require.Equal(t, 0, code, errOut)
			e := cronJob(t, out)
			require.Equal(t, scheduler.PayloadCommand, e.Payload.Kind)
			require.Empty(t, e.Payload.Args)
			require.Equal(t, schedule.OverlapBufferOne, e.Overlap)
			require.Equal(t, "Europe/Berlin", e.Schedule.TZ, "fields not sent are kept")

			code, _, errOut = run(t, home, "cron", "edit", "nightly", "--cron", "61 * * * *")
			require.Equal(t, 2, code)
			require.Contains(t, errOut, "--cron")

			code, out, errOut = run(t, home, "cron", "disable", "nightly", "--json")
			require.Equal(t, 0, code, errOut)
			require.False(t, cronJob(t, out).Enabled)
			code, _, errOut = run(t, home, "cron", "run", "nightly")
			require.Equal(t, 2, code, "a disabled job does not run")
			require.Contains(t, errOut, "cron enable")
			code, out, errOut = run(t, home, "cron", "enable", "nightly", "--json")
			require.Equal(t, 0, code, errOut)
			require.True(t, cronJob(t, out).Enabled)

			code, out, errOut = run(t, home, "cron", "runs", "nightly", "--json")
			require.Equal(t, 0, code, errOut)
			require.JSONEq(t, `{"count":0,"runs":[]}`, out)
			code, _, errOut = run(t, home, "cron", "runs", "ghost")
			require.Equal(t, 1, code)
			require.Contains(t, errOut, `no job has id or name "ghost"`)

			code, out, errOut = run(t, home, "cron", "status", "--json")
			require.Equal(t, 0, code, errOut)
			var st struct {
				Running bool
				Count   int
				Jobs    []scheduler.JobStatus
			}
			require.NoError(t, json.Unmarshal([]byte(out), &st))
			require.Equal(t, m.gateway, st.Running)
			require.Equal(t, 1, st.Count)
			require.Equal(t, "nightly", st.Jobs[0].Job.Name)
			code, out, _ = run(t, home, "cron", "status")
			require.Equal(t, 0, code)
			if m.gateway {
				require.Contains(t, out, "Scheduler: running in the gateway")
			} else {
				require.Contains(t, out, "Scheduler: stopped")
			}

			code, out, errOut = run(t, home, "cron", "rm", "nightly")
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "Removed cron job "+j.ID)
			for _, verb := range []string{"show", "edit", "enable", "disable", "rm", "run"} {
				code, _, errOut = run(t, home, "cron", verb, "nightly")
				require.Equal(t, 1, code, verb)
				require.Contains(t, errOut, `no job has id or name "nightly"`, verb)
			}
			require.Equal(t, 0, cronCount(t, home))
		})
	}
}
