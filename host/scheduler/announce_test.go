package scheduler_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/sdk"
)

// destEnv is a loopEnv whose scheduler sends to destinations through a
// real book, with ops named in its notify config.
func destEnv(t *testing.T, named map[string]string) *loopEnv {
	t.Helper()
	book, err := dest.NewBook(dest.Config{Named: named})
	require.NoError(t, err)
	return newLoopEnv(t, scheduler.Config{Dests: dest.CronDests{Book: book}})
}

// numbered is n lines "line 1" … "line n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// TestAnnounceToEachDestination: a run's result goes to every
// --announce-to destination: an http one gets the Report JSON with the
// command's last 20 stdout lines, a chat one (generic+http, through
// shoutrrr) the text, and a cmd: one the Report on stdin; each under the
// run's idempotency key.
func TestAnnounceToEachDestination(t *testing.T) {
	web, chat := newHook(t, http.StatusOK), newHook(t, http.StatusOK)
	out := filepath.Join(t.TempDir(), "report.json")
	e := destEnv(t, map[string]string{"desk": "generic+" + chat.srv.URL + "/chat"})
	j := e.add(scheduler.JobInput{Name: "nightly report", Schedule: schedule.Flags{Cron: "0 0 1 1 *"}, Command: "seq 30",
		AnnounceTo: []string{web.srv.URL + "/hook", "desk", "cmd:cat > '" + out + "'"}})
	require.Equal(t, []string{web.srv.URL + "/hook", "desk", "cmd:cat > '" + out + "'"}, j.Announce)

	r, err := e.sched.RunNow(j.ID, "")
	require.NoError(t, err)
	e.finishWithResult(r.TaskID, sdk.TaskSucceeded, numbered(30))
	e.tickAt(t0.Add(time.Second))
	require.Equal(t, scheduler.DeliveryPending, e.runs(j.ID)[0].Delivery)
	e.deliver()

	want := strings.TrimSuffix(strings.TrimPrefix(numbered(30), numbered(10)), "\n")
	got := web.received()
	require.Len(t, got, 1)
	require.Equal(t, scheduler.EventRunFinished, got[0]["event"])
	require.Equal(t, scheduler.RunOK, got[0]["status"])
	require.Equal(t, want, got[0]["output"], "the last 20 lines")
	require.Equal(t, []string{r.ID + "/" + scheduler.EventRunFinished}, web.keys)

	text := chat.received()
	require.Len(t, text, 1)
	body := fmt.Sprint(text[0])
	require.Contains(t, body, "ok: nightly report")
	require.Contains(t, body, "line 30")
	require.NotContains(t, body, "line 10\\n", "only the tail")

	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep scheduler.Report
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, r.ID, rep.RunID)
	require.Equal(t, want, rep.Output)
	require.Equal(t, scheduler.DeliveryDelivered, e.runs(j.ID)[0].Delivery)

	e.deliver()
	require.Len(t, web.received(), 1, "a delivered announcement is not sent again")
}

// TestAnnounceRetriesOnlyTheFailingDestination: one destination that
// fails is retried alone after its backoff; the run's delivery stays
// failed once it has given up, though the other got it.
func TestAnnounceRetriesOnlyTheFailingDestination(t *testing.T) {
	good, bad := newHook(t, http.StatusOK), newHook(t, http.StatusInternalServerError)
	e := destEnv(t, nil)
	j := e.add(scheduler.JobInput{Name: "two", Schedule: schedule.Flags{Cron: "0 0 1 1 *"}, Command: "true",
		AnnounceTo: []string{good.srv.URL, bad.srv.URL}})
	r, err := e.sched.RunNow(j.ID, "")
	require.NoError(t, err)
	e.finishWithResult(r.TaskID, sdk.TaskSucceeded, "")
	e.tickAt(t0.Add(time.Second))
	e.deliver()
	require.Len(t, good.received(), 1)
	require.Len(t, bad.received(), 1)
	require.Equal(t, scheduler.DeliveryPending, e.runs(j.ID)[0].Delivery)

	for _, at := range []time.Duration{15 * time.Second, 2 * time.Minute} {
		e.clock.set(t0.Add(at))
		e.deliver()
	}
	require.Len(t, good.received(), 1, "the destination that got it is not sent again")
	require.Len(t, bad.received(), 3, "the failing one is tried DefaultDeliveryAttempts times")
	run := e.runs(j.ID)[0]
	require.Equal(t, scheduler.DeliveryFailed, run.Delivery)
	require.Contains(t, run.DeliveryError, "500")
}

// TestFailureAlertToADestination: --failure-alert-to gets the alert
// after N failures in a row, and results go nowhere else.
func TestFailureAlertToADestination(t *testing.T) {
	alerts, chat := newHook(t, http.StatusOK), newHook(t, http.StatusOK)
	e := destEnv(t, nil)
	j := e.add(scheduler.JobInput{Name: "flaky", Schedule: schedule.Flags{Cron: "0 0 1 1 *"}, Command: "false",
		FailureAlertAfter: 2, FailureAlertTo: []string{alerts.srv.URL, "generic+" + chat.srv.URL}})
	require.Equal(t, []scheduler.Delivery{{Kind: scheduler.DeliveryDest, Dest: alerts.srv.URL}, {Kind: scheduler.DeliveryDest, Dest: "generic+" + chat.srv.URL}},
		j.FailureAlert.Destinations(j))
	for i := 1; i <= 2; i++ {
		at := t0.Add(time.Duration(i) * time.Minute)
		e.clock.set(at)
		r, err := e.sched.RunNow(j.ID, "")
		require.NoError(t, err)
		e.finishWithResult(r.TaskID, sdk.TaskFailed, "")
		e.tickAt(at.Add(time.Second))
		e.deliver()
	}
	got := alerts.received()
	require.Len(t, got, 1, "one alert, at the second failure")
	require.Equal(t, scheduler.EventFailureAlert, got[0]["event"])
	require.Equal(t, float64(2), got[0]["consecutive_errors"])
	text := chat.received()
	require.Len(t, text, 1)
	require.Contains(t, fmt.Sprint(text[0]), "2 failed runs in a row")
	require.Empty(t, e.runs(j.ID)[0].Delivery, "the job posts no results")
	require.Equal(t, scheduler.DeliveryDelivered, e.runs(j.ID)[0].Alert)
}

// TestJobDestinationsAreChecked: a destination that is not one, holds a
// literal secret or names nothing in the config is refused with the flag
// and what to do, and nothing is stored.
func TestJobDestinationsAreChecked(t *testing.T) {
	e := destEnv(t, map[string]string{"ops": "https://hooks.example.com/ops"})
	base := scheduler.JobInput{Name: "j", Schedule: schedule.Flags{Every: "1h"}, Command: "true"}
	for _, c := range []struct {
		name string
		edit func(*scheduler.JobInput)
		flag string
		says string
	}{
		{"unknown scheme", func(in *scheduler.JobInput) { in.AnnounceTo = []string{"gopher://x"} }, "--announce-to", "unknown"},
		{"literal secret", func(in *scheduler.JobInput) { in.AnnounceTo = []string{"https://h.example.com/x?token=abc123"} }, "--announce-to", "${VAR}"},
		{"unknown name", func(in *scheduler.JobInput) { in.NotifyTo = []string{"pager"} }, "--notify-to", "the names are ops"},
		{"alert with no threshold", func(in *scheduler.JobInput) { in.FailureAlertTo = []string{"ops"} }, "--failure-alert-to", "needs --failure-alert-after"},
		{"bad alert dest", func(in *scheduler.JobInput) { in.FailureAlertAfter, in.FailureAlertTo = 1, []string{"cmd:"} }, "--failure-alert-to", "cmd:COMMAND"},
		{"bad policy", func(in *scheduler.JobInput) { in.Notify = "always" }, "--notify", "done_only, state_changes, silent"},
		{"silent with dests", func(in *scheduler.JobInput) { in.Notify, in.NotifyTo = "silent", []string{"ops"} }, "--notify-to", "sends nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := base
			c.edit(&in)
			_, err := e.sched.Jobs().Add(in)
			var fe *schedule.FlagError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, c.flag, fe.Flag)
			require.ErrorContains(t, err, c.says)
			require.NotContains(t, err.Error(), "abc123", "the secret is not repeated")
			jobs, err := e.sched.Jobs().List(true)
			require.NoError(t, err)
			require.Empty(t, jobs)
		})
	}

	j := e.add(scheduler.JobInput{Name: "ok", Schedule: schedule.Flags{Every: "1h"}, Command: "true",
		AnnounceTo: []string{"ops", "ops", " "}, Notify: "state_changes", NotifyTo: []string{"https://h.example.com/x?token=${HOOK_TOKEN}"}})
	require.Equal(t, []string{"ops"}, j.Announce, "repeats and blanks dropped")
	_, err := e.sched.Jobs().Edit("ok", scheduler.JobPatch{AnnounceTo: &[]string{"nowhere"}})
	require.ErrorContains(t, err, `no destination is named "nowhere"`)
	j, err = e.sched.Jobs().Edit("ok", scheduler.JobPatch{AnnounceTo: &[]string{""}})
	require.NoError(t, err)
	require.Empty(t, j.Announce, "an empty value clears the list")
	require.Equal(t, "state_changes", j.Notify, "kept by an edit that does not name it")

	bare := newLoopEnv(t, scheduler.Config{})
	_, err = bare.sched.Jobs().Add(scheduler.JobInput{Name: "x", Schedule: schedule.Flags{Every: "1h"}, Command: "true", AnnounceTo: []string{"ops"}})
	require.ErrorContains(t, err, "no destination support", "a scheduler with no book refuses rather than fail every run")
}

// TestRunsCarryTheJobsNotifyPolicy: the flows a job's runs make (a
// pipeline's, and a command task's mirrored flow) take its --notify and
// --notify-to, so the engine queues their notices.
func TestRunsCarryTheJobsNotifyPolicy(t *testing.T) {
	e := destEnv(t, map[string]string{"ops": "https://hooks.example.com/ops"})
	file := filepath.Join(t.TempDir(), "p.lobster")
	require.NoError(t, os.WriteFile(file, []byte("steps: []\n"), 0o600))
	cmd := e.add(scheduler.JobInput{Name: "cmd", Schedule: schedule.Flags{Cron: "0 0 1 1 *"}, Command: "true", Notify: "state_changes", NotifyTo: []string{"ops"}})
	pipe := e.add(scheduler.JobInput{Name: "pipe", Schedule: schedule.Flags{Cron: "0 0 1 1 *"}, Pipeline: file, Notify: "silent"})

	r, err := e.sched.RunNow(cmd.ID, "")
	require.NoError(t, err)
	task, err := e.eng.GetTask(r.TaskID)
	require.NoError(t, err)
	f, err := e.eng.GetFlow(task.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.NotifyStateChanges, f.NotifyPolicy)
	require.Equal(t, []string{"ops"}, f.NotifyTo)

	r, err = e.sched.RunNow(pipe.ID, "")
	require.NoError(t, err)
	f, err = e.eng.GetFlow(r.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.NotifySilent, f.NotifyPolicy)
	require.Empty(t, f.NotifyTo)
}
