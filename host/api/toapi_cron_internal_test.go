package api

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/host/trigger"
	"github.com/flowgate/flowgate/sdk"
)

// A cron job, a cron run, a trigger, a plugin's status and an audit
// report encode to the same bytes in the API's words as in the types
// they came from: the socket's JSON did not change when they got their
// own types.
func TestCronAndOtherAnswersKeepTheirJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 15, 4, 5, 0, time.UTC)
	job := scheduler.Job{ID: "j1", Name: "nightly", Enabled: true,
		Schedule: scheduler.JobSchedule{Kind: schedule.KindCron, Expr: "0 3 * * *", TZ: "Europe/Berlin", DST: schedule.DSTSkip, Stagger: scheduler.Duration(5 * time.Minute)},
		Payload:  scheduler.Payload{Kind: scheduler.PayloadPipeline, Pipeline: "/srv/p.flow", Args: json.RawMessage(`{"n":1}`), GateTimeout: scheduler.Duration(time.Hour)},
		Session:  scheduler.SessionIsolated, Overlap: schedule.OverlapBufferOne, CatchUpWindow: scheduler.Duration(2 * time.Hour),
		Delivery:     scheduler.Delivery{Kind: scheduler.DeliveryWebhook, URL: "https://example.com/hook"},
		FailureAlert: scheduler.FailureAlert{After: 3, To: &scheduler.Delivery{Kind: scheduler.DeliveryCommand, Command: "page"}, Dests: []string{"ops"}},
		CreatedAt:    at, UpdatedAt: at, State: scheduler.JobState{NextRun: at.Add(time.Hour), LastStatus: "ok", ConsecutiveErrors: 1},
		Announce: []string{"chat"}, Notify: "silent", LastToggle: &scheduler.Toggle{Enabled: true, By: "ana", At: at}}
	wait := &scheduler.GateWait{Step: "approve", Kind: "approval", ApprovalID: "a1", FlowID: "f1", Since: at, Until: at.Add(time.Hour)}
	run := scheduler.Run{ID: scheduler.RunID("j1", at), JobID: "j1", Scheduled: at, Status: scheduler.RunRunning,
		Trigger: scheduler.TriggerManual, By: "ana", FlowID: "f1", StartedAt: at, Delivery: "pending", Waiting: wait}
	trig := trigger.Trigger{Name: "push", Enabled: true, Target: trigger.TargetPipeline, Pipeline: "/srv/p.flow", ArgsFrom: trigger.ArgsFromBody,
		SecretEnv: "HOOK_SECRET", MaxBody: 1 << 20, Rate: 10, Burst: 20, CreatedAt: at, UpdatedAt: at,
		LastToggle: &trigger.Toggle{Enabled: false, By: "bo", At: at}}
	plugin := pluginhost.Status{Name: "pipeline", Version: "1.2", State: pluginhost.StateBackoff, PID: 42, Restarts: 2, Epoch: 3,
		LastError: "exit", Since: at, Pending: 4, Stages: []sdk.Stage{{Name: "build"}}, Exit: "exit status 3", Stderr: []string{"boom"}}
	age := int64(1500)
	findings := []audit.Finding{
		{Kind: audit.KindTask, Severity: audit.Error, Code: audit.Lost, Detail: "gone", AgeMS: &age, Status: "running", Token: "t1",
			Task: &stored.Task{Task: sdk.Task{ID: "t1", Status: sdk.TaskRunning}, PID: 7}},
		{Kind: audit.KindFlow, Severity: audit.Warn, Code: audit.StaleWaiting, Detail: "waits", Status: "waiting", Token: "f1",
			Flow: &sdk.Flow{ID: "f1", Status: sdk.FlowWaiting, CreatedAt: at}},
	}
	report := audit.Report{Findings: findings, Summary: audit.Summarize(findings),
		Skipped: []audit.Skip{{Code: audit.ControllerUnavailable, Reason: "no gateway"}}}
	cases := []struct {
		name      string
		from      any
		converted any
	}{
		{"cron job", job, cronJobOf(job)},
		{"cron job without alert or toggle", scheduler.Job{ID: "j2", CreatedAt: at}, cronJobOf(scheduler.Job{ID: "j2", CreatedAt: at})},
		{"cron job status", scheduler.JobStatus{Job: job, Active: 1, Waiting: wait}, cronJobStatusOf(scheduler.JobStatus{Job: job, Active: 1, Waiting: wait})},
		{"cron run", run, cronRunOf(run)},
		{"trigger", trig, triggerOf(trig)},
		{"trigger run", trigger.Run{Trigger: "push", Delivery: "d1", FlowID: "f1", At: at}, apitype.TriggerRun(trigger.Run{Trigger: "push", Delivery: "d1", FlowID: "f1", At: at})},
		{"plugin status", plugin, PluginStatusOf(plugin)},
		{"audit report", report, AuditReportOf(report)},
	}
	for _, c := range cases {
		want, err := json.Marshal(c.from)
		require.NoError(t, err, c.name)
		got, err := json.Marshal(c.converted)
		require.NoError(t, err, c.name)
		require.Equal(t, string(want), string(got), "%s: the same bytes, field order too", c.name)
	}
}

// The constants the API names are the engine's, and the pure helpers
// copied into apitype answer as the engine's do.
func TestCronAndOtherWordsAreTheEngines(t *testing.T) {
	t.Parallel()
	for _, p := range [][2]string{
		{string(apitype.ScheduleCron), string(schedule.KindCron)}, {string(apitype.ScheduleEvery), string(schedule.KindEvery)},
		{string(apitype.ScheduleAt), string(schedule.KindAt)}, {string(apitype.DSTShift), string(schedule.DSTShift)},
		{string(apitype.DSTSkip), string(schedule.DSTSkip)}, {string(apitype.OverlapSkip), string(schedule.OverlapSkip)},
		{string(apitype.OverlapBufferOne), string(schedule.OverlapBufferOne)}, {string(apitype.OverlapBufferAll), string(schedule.OverlapBufferAll)},
		{string(apitype.OverlapCancelOther), string(schedule.OverlapCancelOther)}, {string(apitype.OverlapAllowAll), string(schedule.OverlapAllowAll)},
		{string(apitype.PayloadPipeline), string(scheduler.PayloadPipeline)}, {string(apitype.PayloadCommand), string(scheduler.PayloadCommand)},
		{string(apitype.DeliveryNone), string(scheduler.DeliveryNone)}, {string(apitype.DeliveryWebhook), string(scheduler.DeliveryWebhook)},
		{string(apitype.DeliveryCommand), string(scheduler.DeliveryCommand)}, {string(apitype.DeliveryDest), string(scheduler.DeliveryDest)},
		{apitype.RunStarting, scheduler.RunStarting}, {apitype.RunRunning, scheduler.RunRunning},
		{apitype.RunBuffered, scheduler.RunBuffered}, {apitype.RunOK, scheduler.RunOK},
		{apitype.RunError, scheduler.RunError}, {apitype.RunCancelled, scheduler.RunCancelled},
		{apitype.RunSkipped, scheduler.RunSkipped}, {apitype.RunMissed, scheduler.RunMissed},
		{apitype.RunInterrupted, scheduler.RunInterrupted}, {apitype.RunPlanned, scheduler.RunPlanned},
		{apitype.TriggerSchedule, scheduler.TriggerSchedule}, {apitype.TriggerManual, scheduler.TriggerManual},
		{apitype.TriggerBackfill, scheduler.TriggerBackfill}, {apitype.TargetPipeline, trigger.TargetPipeline},
		{apitype.TargetController, trigger.TargetController}, {string(apitype.PluginStarting), string(pluginhost.StateStarting)},
		{string(apitype.PluginRunning), string(pluginhost.StateRunning)}, {string(apitype.PluginBackoff), string(pluginhost.StateBackoff)},
		{string(apitype.PluginFailed), string(pluginhost.StateFailed)}, {string(apitype.PluginStopped), string(pluginhost.StateStopped)},
		{string(apitype.AuditKindTask), string(audit.KindTask)}, {string(apitype.AuditKindFlow), string(audit.KindFlow)},
		{string(apitype.AuditWarn), string(audit.Warn)}, {string(apitype.AuditError), string(audit.Error)},
	} {
		require.Equal(t, p[1], p[0])
	}
	for _, status := range []string{scheduler.RunStarting, scheduler.RunRunning, scheduler.RunBuffered, scheduler.RunOK, scheduler.RunSkipped, scheduler.RunMissed} {
		require.Equal(t, scheduler.Run{Status: status}.Open(), apitype.CronRun{Status: status}.Open(), status)
	}
	for _, s := range audit.Severities() {
		for _, min := range audit.Severities() {
			require.Equal(t, s.AtLeast(min), apitype.AuditSeverity(s).AtLeast(apitype.AuditSeverity(min)))
		}
	}
	g := scheduler.GateWait{Step: "approve", Since: time.Unix(10, 0), Until: time.Unix(20, 0)}
	require.Equal(t, g.String(), apitype.GateWait(g).String())
	h := store.WriteHealth{LastError: "EIO"}
	require.Equal(t, h.Problem("store"), apitype.WriteHealth(h).Problem("store"))
	job := scheduler.Job{ID: "j1", Announce: []string{"chat"}, Delivery: scheduler.Delivery{Kind: scheduler.DeliveryWebhook, URL: "u"}}
	for _, a := range []scheduler.FailureAlert{{}, {Dests: []string{"ops"}}, {To: &scheduler.Delivery{Kind: scheduler.DeliveryNone}}} {
		job.FailureAlert = a
		api := cronJobOf(job)
		want, _ := json.Marshal(a.Destinations(job))
		got, _ := json.Marshal(api.FailureAlert.Destinations(api))
		require.Equal(t, string(want), string(got))
	}
}

// A job's fire schedule read through the API is the scheduler's: the same
// next time and the same stagger offset.
func TestCronFireScheduleIsTheSchedulers(t *testing.T) {
	t.Parallel()
	job, err := scheduler.JobInput{Name: "hourly", Schedule: schedule.Flags{Cron: "0 * * * *"}, Command: "true"}.Build(time.Now())
	require.NoError(t, err)
	job.ID = "j-stagger"
	now := time.Date(2026, 12, 2, 15, 4, 5, 0, time.UTC)
	require.Equal(t, job.FireSchedule().Next(now), CronFireSchedule(cronJobOf(job)).Next(now))
	w, off := job.FireSchedule().Window()
	gw, goff := CronStagger(cronJobOf(job))
	require.Equal(t, w, gw)
	require.Equal(t, off, goff)
	require.Positive(t, w, "a top-of-hour job is staggered by default")
}

// A scheduler's flag error reaches the caller as the API's, with its
// flag and rule, still matching sdk.ErrInvalid.
func TestFlagErrorsBecomeTheAPIs(t *testing.T) {
	t.Parallel()
	_, err := ParseOverlap("sideways")
	fe, ok := errors.AsType[*apitype.FlagError](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "--overlap", fe.Flag)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	plain := errors.New("disk on fire")
	require.Same(t, plain, flagErrorOf(plain))
	require.NoError(t, flagErrorOf(nil))
}
