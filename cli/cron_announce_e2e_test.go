package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/notify/dest/desttest"
	"github.com/flowgate/flowgate/host/scheduler"
)

// reportSink keeps the cron reports a loopback receiver is posted, by
// path.
type reportSink struct{ *desttest.Receiver }

func newReportSink(t *testing.T) reportSink { return reportSink{desttest.NewReceiver(t, 0)} }

// at returns the reports posted to path.
func (s reportSink) at(path string) []scheduler.Report {
	var out []scheduler.Report
	for _, p := range s.Posts() {
		if p.Path != path {
			continue
		}
		var r scheduler.Report
		if json.Unmarshal([]byte(p.Body), &r) != nil {
			r.Error = "not a report: " + p.Body
		}
		out = append(out, r)
	}
	return out
}

// TestCronAnnounceEndToEnd: with a gateway process, jobs run by hand
// announce their result to an HTTP receiver on loopback: a pipeline's
// output, a command's last 20 stdout lines (to a destination named in
// the gateway config); and a job failing twice alerts its
// --failure-alert-to once.
func TestCronAnnounceEndToEnd(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	sink := newReportSink(t)
	writeGatewayConfig(t, home, "notify:\n  reports: "+sink.URL+"/cmd\n")
	startDaemon(t, home, filepath.Join(dir, "gateway.log"))
	wf := filepath.Join(dir, "hello.lobster")
	require.NoError(t, os.WriteFile(wf, []byte("name: hello\nsteps:\n  - id: greet\n    run: echo '{\"greeting\":\"hello\"}'\n"), 0o600))

	add := func(args ...string) {
		t.Helper()
		code, _, errOut := run(t, home, append([]string{"cron", "add", "--every", "1h"}, args...)...)
		require.Equal(t, 0, code, errOut)
	}
	add("--name", "pipe", "--pipeline", wf, "--announce-to", sink.URL+"/pipe")
	add("--name", "tail", "--command", "seq 30", "--announce-to", "reports")
	add("--name", "flaky", "--command", "echo broken >&2; exit 3", "--failure-alert-after", "2", "--failure-alert-to", sink.URL+"/alert")
	for _, job := range []string{"pipe", "tail", "flaky", "flaky"} {
		code, out, errOut := run(t, home, "cron", "run", job, "--wait")
		require.Equal(t, map[bool]int{true: 1, false: 0}[job == "flaky"], code, out+errOut)
	}
	require.Eventually(t, func() bool {
		return len(sink.at("/pipe")) == 1 && len(sink.at("/cmd")) == 1 && len(sink.at("/alert")) == 1
	}, 30*time.Second, 50*time.Millisecond, "announcements did not arrive: %v", sink.Posts())

	p := sink.at("/pipe")[0]
	require.Equal(t, scheduler.EventRunFinished, p.Event)
	require.Equal(t, scheduler.RunOK, p.Status)
	require.JSONEq(t, `[{"greeting":"hello"}]`, string(p.Result), "the pipeline's output")

	c := sink.at("/cmd")[0]
	require.Equal(t, "tail", c.JobName)
	var want []string
	for i := 11; i <= 30; i++ {
		want = append(want, strconv.Itoa(i))
	}
	require.Equal(t, strings.Join(want, "\n"), c.Output, "the last 20 lines of stdout")

	a := sink.at("/alert")[0]
	require.Equal(t, scheduler.EventFailureAlert, a.Event)
	require.Equal(t, 2, a.ConsecutiveErrors)
	require.Equal(t, scheduler.RunError, a.Status)

	for _, job := range []string{"pipe", "tail"} {
		runs := cronRunsOf(t, home, job)
		require.Eventually(t, func() bool { runs = cronRunsOf(t, home, job); return runs[0].Delivery == scheduler.DeliveryDelivered },
			10*time.Second, 50*time.Millisecond, "the run records its announcement: %+v", runs)
	}
	require.Len(t, sink.at("/alert"), 1, "one alert for two failures")
}

// TestCronNotifyPolicyEndToEnd: a job's --notify state_changes flows
// send each status change to its --notify-to; cron show and list print
// destinations with their ${VAR} refs, never a value; a destination that
// is not one, or holds a literal secret, is refused (exit 2) and nothing
// is stored.
func TestCronNotifyPolicyEndToEnd(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	const secret = "s3cr3t-value"
	rcv := newHookReceiver(t, 0)
	startDaemon(t, home, filepath.Join(dir, "gateway.log"), "HOOK_TOKEN="+secret)

	for _, c := range []struct{ flag, value, says string }{
		{"--announce-to", "https://hooks.example.com/x?token=" + secret, "${VAR}"},
		{"--notify-to", "nowhere", `no destination is named "nowhere"`},
		{"--failure-alert-to", "gopher://x", "unknown"},
	} {
		code, out, errOut := run(t, home, "cron", "add", "--name", "bad", "--every", "1h", "--command", "true", "--webhook", rcv.url+"/unused", "--failure-alert-after", "1", c.flag, c.value)
		require.Equal(t, 2, code, out+errOut)
		require.Contains(t, errOut, c.flag)
		require.Contains(t, errOut, c.says)
		require.NotContains(t, errOut, secret)
	}
	code, out, _ := run(t, home, "cron", "list", "--all", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"count": 0`, "nothing was stored")

	announce := "https://hooks.example.com/x?token=${HOOK_TOKEN}"
	code, _, errOut := run(t, home, "cron", "add", "--name", "watched", "--every", "1h", "--command", "true",
		"--notify", "state_changes", "--notify-to", rcv.url+"/flow", "--announce-to", announce)
	require.Equal(t, 0, code, errOut)
	code, out, errOut = run(t, home, "cron", "run", "watched", "--wait")
	require.Equal(t, 0, code, out+errOut)
	require.Eventually(t, func() bool { return len(rcv.accepted("/flow")) == 2 }, 30*time.Second, 50*time.Millisecond,
		"messages did not arrive: %v", rcv.all())
	require.Equal(t, []string{"flow.status running", "flow.finished succeeded"}, postStatuses(rcv.accepted("/flow")))

	code, out, _ = run(t, home, "cron", "show", "watched", "--json")
	require.Equal(t, 0, code)
	j := cronJob(t, out)
	require.Equal(t, []string{announce}, j.Announce)
	require.Equal(t, "state_changes", j.Notify)
	code, out, _ = run(t, home, "cron", "show", "watched")
	require.Equal(t, 0, code)
	require.Contains(t, out, "${HOOK_TOKEN}")
	require.Contains(t, out, "state_changes to "+rcv.url+"/flow")
	code, list, _ := run(t, home, "cron", "list")
	require.Equal(t, 0, code)
	require.Contains(t, list, "https://hooks.example.com")
	for _, o := range []string{out, list} {
		require.NotContains(t, o, secret)
	}
}

// TestCronDestinationNamesWithoutGateway: with no gateway running, cron
// add checks a destination name against the home's gateway config, as
// the gateway would.
func TestCronDestinationNamesWithoutGateway(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	writeGatewayConfig(t, home, "notify:\n  ops: https://hooks.example.com/ops\n")
	code, _, errOut := run(t, home, "cron", "add", "--name", "named", "--every", "1h", "--command", "true", "--announce-to", "ops")
	require.Equal(t, 0, code, errOut)
	code, _, errOut = run(t, home, "cron", "edit", "named", "--announce-to", "pager")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--announce-to: no destination is named "pager" in the gateway config's notify: map; the names are ops`)
	code, out, _ := run(t, home, "cron", "show", "named", "--json")
	require.Equal(t, 0, code)
	require.Equal(t, []string{"ops"}, cronJob(t, out).Announce, "the refused edit changed nothing")
}
