package cli_test

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
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
	require.Equal(t, scheduler.KindCron, j.Schedule.Kind)
	require.Equal(t, "Europe/Berlin", j.Schedule.TZ)
	require.Equal(t, scheduler.PayloadPipeline, j.Payload.Kind)
	require.True(t, filepath.IsAbs(j.Payload.Pipeline))
	require.JSONEq(t, `{"env":"prod"}`, string(j.Payload.Args))
	require.Equal(t, scheduler.SessionIsolated, j.Session)
	require.Equal(t, scheduler.OverlapBufferOne, j.Overlap)
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

	code, out, _ = run(t, home, "cron", "list")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "Cron jobs: 2", lines[0])
	require.Regexp(t, `^ID\s+Name\s+Schedule\s+TZ\s+Next run\s+Last status\s+Enabled$`, lines[1])
	require.Contains(t, lines[2], "tick", "the sooner job is listed first")
	require.Contains(t, lines[3], "Europe/Berlin")
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
	require.Equal(t, scheduler.OverlapBufferOne, e.Overlap, "unchanged flags are kept")

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
	home := t.TempDir()
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
		{"no schedule", append([]string{"--name", "x"}, cmd...), []string{"schedule is required"}},
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
	require.Equal(t, scheduler.KindEvery, cronJob(t, out).Schedule.Kind)

	for _, verb := range []string{"show", "edit", "enable", "disable", "rm"} {
		code, _, errOut = run(t, home, "cron", verb, "ghost")
		require.Equal(t, 1, code, verb)
		require.Contains(t, errOut, `no job has id or name "ghost"`, verb)
	}
	code, _, _ = run(t, home, "cron", "show", j.ID)
	require.Equal(t, 0, code)
}

// A gateway holds the store, and the gateway has no cron API yet: the cron
// commands say so rather than wait on the store lock.
func TestCronRefusesWhileGatewayRuns(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ln, err := net.Listen("unix", gateway.SocketPath(home))
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"running":true}`))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })

	code, out, errOut := run(t, home, "cron", "list")
	require.Equal(t, 1, code, errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, "cron commands need the gateway stopped for now")
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
	require.Equal(t, "Cron jobs: 0\n", out)
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
