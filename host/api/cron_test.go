package api_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/sdk"
)

// TestRemoteCronMatchesLocal drives every cron method through the socket
// and requires the answers Local gives for the same jobs.
func TestRemoteCronMatchesLocal(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := t.Context()
	local, remote := g.local, g.remote

	st, err := remote.CronStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, api.CronStatus{Jobs: []apitype.CronJobStatus{}}, st)
	jobs, err := remote.ListJobs(ctx, true)
	require.NoError(t, err)
	require.Empty(t, jobs)
	require.NotNil(t, jobs)

	wf := filepath.Join(t.TempDir(), "nightly.lobster")
	nightly, err := remote.AddJob(ctx, apitype.CronJobInput{Name: "nightly", Description: "build it",
		Schedule: apitype.ScheduleFlags{Cron: "30 2 * * *", TZ: "Europe/Berlin", DST: "skip"},
		Pipeline: wf, ArgsJSON: `{"env":"prod"}`, Session: "session:ops", Overlap: "buffer_all", CatchUpWindow: "6h",
		Webhook: "https://example.com/hook", FailureAlertAfter: 3, FailureAlertCooldown: "2h"})
	require.NoError(t, err)
	require.Equal(t, "Europe/Berlin", nightly.Schedule.TZ)
	require.Equal(t, apitype.DSTSkip, nightly.Schedule.DST)
	require.Equal(t, wf, nightly.Payload.Pipeline)
	require.JSONEq(t, `{"env":"prod"}`, string(nightly.Payload.Args))
	require.Equal(t, apitype.CronFailureAlert{After: 3, Cooldown: apitype.Duration(2 * time.Hour)}, nightly.FailureAlert)
	tick, err := local.AddJob(ctx, apitype.CronJobInput{Name: "tick/../x", Schedule: apitype.ScheduleFlags{Every: "1m"}, Command: "echo tick", Disabled: true})
	require.NoError(t, err)

	for _, ref := range []string{nightly.ID, "nightly", tick.ID, "tick/../x"} {
		want, err := local.GetJob(ctx, ref)
		require.NoError(t, err, ref)
		got, err := remote.GetJob(ctx, ref)
		require.NoError(t, err, ref)
		requireSameJSON(t, want, got, ref)
	}
	for _, all := range []bool{false, true} {
		want, err := local.ListJobs(ctx, all)
		require.NoError(t, err)
		got, err := remote.ListJobs(ctx, all)
		require.NoError(t, err)
		require.Len(t, got, map[bool]int{false: 1, true: 2}[all])
		requireSameJSON(t, want, got, "all=%v", all)
	}

	// EditJob sends only the fields set: the zero values among them apply,
	// the fields not set are kept.
	edited, err := remote.EditJob(ctx, "nightly", apitype.CronJobPatch{Command: ptr("make nightly"), Description: ptr(""),
		FailureAlertAfter: ptr(0), Webhook: ptr("")})
	require.NoError(t, err)
	require.Equal(t, apitype.PayloadCommand, edited.Payload.Kind)
	require.Empty(t, edited.Description)
	require.Zero(t, edited.FailureAlert)
	require.Equal(t, apitype.DeliveryNone, edited.Delivery.Kind)
	require.Equal(t, "session:ops", edited.Session, "fields not sent are kept")
	require.Equal(t, apitype.OverlapBufferAll, edited.Overlap)
	want, err := local.GetJob(ctx, nightly.ID)
	require.NoError(t, err)
	requireSameJSON(t, want, edited)

	on, err := remote.SetJobEnabled(ctx, tick.ID, true, "ann")
	require.NoError(t, err)
	require.True(t, on.Enabled)
	off, err := remote.SetJobEnabled(ctx, tick.ID, false, "ann")
	require.NoError(t, err)
	require.False(t, off.Enabled)
	require.Equal(t, &apitype.CronToggle{Enabled: false, By: "ann", At: off.UpdatedAt.UTC()}, off.LastToggle, "who disabled it crosses the socket")
	_, err = remote.SetJobEnabled(ctx, tick.ID, true, "ann")
	require.NoError(t, err)

	// RunJobNow records a manual run with its task; BackfillJob's dry run
	// lists the times, a real one records them.
	r, err := remote.RunJobNow(ctx, "tick/../x", "ann")
	require.NoError(t, err)
	require.Equal(t, scheduler.RunRunning, r.Status)
	require.Equal(t, scheduler.TriggerManual, r.Trigger)
	require.Equal(t, "ann", r.By, "who asked crosses the socket")
	require.NotEmpty(t, r.TaskID)
	task, err := local.ResolveTask(ctx, r.TaskID)
	require.NoError(t, err)
	require.Equal(t, r.ID, task.IdempotencyKey)

	to := time.Now().UTC().Truncate(time.Minute)
	o := apitype.BackfillOptions{From: to.Add(-3 * time.Minute), To: to, DryRun: true}
	plan, err := remote.BackfillJob(ctx, tick.ID, o)
	require.NoError(t, err)
	require.Len(t, plan, 3)
	wantPlan, err := local.BackfillJob(ctx, tick.ID, o)
	require.NoError(t, err)
	requireSameJSON(t, wantPlan, plan)
	o.DryRun, o.Overlap, o.By = false, apitype.OverlapAllowAll, "ann"
	done, err := remote.BackfillJob(ctx, tick.ID, o)
	require.NoError(t, err)
	require.Len(t, done, 3)
	for _, r := range done {
		require.Equal(t, scheduler.RunRunning, r.Status)
		require.Equal(t, scheduler.TriggerBackfill, r.Trigger)
		require.Equal(t, "ann", r.By)
	}

	for _, limit := range []int{0, 1, 2, 10} {
		want, err := local.JobRuns(ctx, tick.ID, limit)
		require.NoError(t, err)
		got, err := remote.JobRuns(ctx, "tick/../x", limit)
		require.NoError(t, err)
		requireSameJSON(t, want, got)
	}
	none, err := remote.JobRuns(ctx, nightly.ID, 0)
	require.NoError(t, err)
	require.Empty(t, none)
	require.NotNil(t, none)

	wantSt, err := local.CronStatus(ctx)
	require.NoError(t, err)
	gotSt, err := remote.CronStatus(ctx)
	require.NoError(t, err)
	require.False(t, gotSt.Running, "a Local client runs no scheduler")
	require.Len(t, gotSt.Jobs, 2)
	require.Equal(t, wantSt.Jobs[0].Active, gotSt.Jobs[0].Active)
	require.Equal(t, 4, gotSt.Jobs[0].Active+gotSt.Jobs[1].Active)

	gone, err := remote.RemoveJob(ctx, "nightly")
	require.NoError(t, err)
	require.Equal(t, nightly.ID, gone.ID)
	_, err = local.GetJob(ctx, nightly.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
}

// TestRemoteCronErrors requires every cron refusal to cross the socket
// with its message and sentinel, and invalid input as a
// *apitype.FlagError naming the flag.
func TestRemoteCronErrors(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := t.Context()
	job, err := g.local.AddJob(ctx, apitype.CronJobInput{Name: "taken", Schedule: apitype.ScheduleFlags{Every: "1h"}, Command: "true"})
	require.NoError(t, err)
	off, err := g.local.AddJob(ctx, apitype.CronJobInput{Name: "off", Schedule: apitype.ScheduleFlags{Every: "1h"}, Command: "true", Disabled: true})
	require.NoError(t, err)
	now := time.Now()

	flagCases := []struct {
		name, flag string
		call       func(c api.Client) error
	}{
		{"bad cron", "--cron", func(c api.Client) error {
			_, err := c.AddJob(ctx, apitype.CronJobInput{Name: "x", Schedule: apitype.ScheduleFlags{Cron: "61 * * * *"}, Command: "true"})
			return err
		}},
		{"no name", "--name", func(c api.Client) error {
			_, err := c.AddJob(ctx, apitype.CronJobInput{Schedule: apitype.ScheduleFlags{Every: "1h"}, Command: "true"})
			return err
		}},
		{"relative pipeline", "--pipeline", func(c api.Client) error {
			_, err := c.AddJob(ctx, apitype.CronJobInput{Name: "x", Schedule: apitype.ScheduleFlags{Every: "1h"}, Pipeline: "nightly.lobster"})
			return err
		}},
		{"edit tz of every", "--tz", func(c api.Client) error {
			_, err := c.EditJob(ctx, job.ID, apitype.CronJobPatch{TZ: ptr("UTC")})
			return err
		}},
		{"edit relative pipeline", "--pipeline", func(c api.Client) error {
			_, err := c.EditJob(ctx, job.ID, apitype.CronJobPatch{Pipeline: ptr("x.lobster")})
			return err
		}},
		{"backfill without range", "--from", func(c api.Client) error {
			_, err := c.BackfillJob(ctx, job.ID, apitype.BackfillOptions{})
			return err
		}},
		{"backfill into the future", "--to", func(c api.Client) error {
			_, err := c.BackfillJob(ctx, job.ID, apitype.BackfillOptions{From: now.Add(-time.Hour), To: now.Add(time.Hour)})
			return err
		}},
		{"backfill unknown overlap", "--overlap", func(c api.Client) error {
			_, err := c.BackfillJob(ctx, job.ID, apitype.BackfillOptions{From: now.Add(-time.Hour), To: now, Overlap: "queue"})
			return err
		}},
		{"negative runs limit", "--limit", func(c api.Client) error {
			_, err := c.JobRuns(ctx, job.ID, -1)
			return err
		}},
	}
	for _, tc := range flagCases {
		want, got := tc.call(g.local), tc.call(g.remote)
		requireSameError(t, want, got, sdk.ErrInvalid, tc.name)
		fe, ok := errors.AsType[*apitype.FlagError](got)
		require.True(t, ok, "%s: %T %v", tc.name, got, got)
		require.Equal(t, tc.flag, fe.Flag, tc.name)
		wantFE, _ := errors.AsType[*apitype.FlagError](want)
		require.Equal(t, wantFE, fe, tc.name)
	}

	cases := []struct {
		name     string
		call     func(c api.Client) error
		sentinel error
	}{
		{"name taken", func(c api.Client) error {
			_, err := c.AddJob(ctx, apitype.CronJobInput{Name: "taken", Schedule: apitype.ScheduleFlags{Every: "1h"}, Command: "true"})
			return err
		}, sdk.ErrInvalid},
		{"rename to a taken name", func(c api.Client) error {
			_, err := c.EditJob(ctx, off.ID, apitype.CronJobPatch{Name: ptr("taken")})
			return err
		}, sdk.ErrInvalid},
		{"run a disabled job", func(c api.Client) error { _, err := c.RunJobNow(ctx, "off", ""); return err }, sdk.ErrInvalid},
		{"get missing", func(c api.Client) error { _, err := c.GetJob(ctx, "ghost"); return err }, sdk.ErrNotFound},
		{"get empty ref", func(c api.Client) error { _, err := c.GetJob(ctx, ""); return err }, sdk.ErrNotFound},
		{"get dot", func(c api.Client) error { _, err := c.GetJob(ctx, ".."); return err }, sdk.ErrNotFound},
		{"edit missing", func(c api.Client) error { _, err := c.EditJob(ctx, "ghost", apitype.CronJobPatch{}); return err }, sdk.ErrNotFound},
		{"edit empty ref", func(c api.Client) error { _, err := c.EditJob(ctx, "", apitype.CronJobPatch{}); return err }, sdk.ErrNotFound},
		{"enable missing", func(c api.Client) error { _, err := c.SetJobEnabled(ctx, "ghost", true, ""); return err }, sdk.ErrNotFound},
		{"remove missing", func(c api.Client) error { _, err := c.RemoveJob(ctx, "ghost"); return err }, sdk.ErrNotFound},
		{"runs of missing", func(c api.Client) error { _, err := c.JobRuns(ctx, "ghost", 0); return err }, sdk.ErrNotFound},
		{"run missing", func(c api.Client) error { _, err := c.RunJobNow(ctx, "ghost", ""); return err }, sdk.ErrNotFound},
		{"run empty ref", func(c api.Client) error { _, err := c.RunJobNow(ctx, "", ""); return err }, sdk.ErrNotFound},
		{"backfill missing", func(c api.Client) error {
			_, err := c.BackfillJob(ctx, "ghost", apitype.BackfillOptions{From: now.Add(-time.Hour), To: now})
			return err
		}, sdk.ErrNotFound},
	}
	for _, tc := range cases {
		want, got := tc.call(g.local), tc.call(g.remote)
		requireSameError(t, want, got, tc.sentinel, tc.name)
		_, isFlag := errors.AsType[*apitype.FlagError](got)
		require.False(t, isFlag, tc.name)
	}
	_, err = g.remote.AddJob(ctx, apitype.CronJobInput{Name: "taken", Schedule: apitype.ScheduleFlags{Every: "1h"}, Command: "true"})
	require.ErrorContains(t, err, `--name: a job named "taken" exists (id `+job.ID+`)`)
}

// TestCronRoutesOnTheWire checks the wire form of the cron routes: the
// flag and rule of invalid input, strict bodies and queries.
func TestCronRoutesOnTheWire(t *testing.T) {
	t.Parallel()
	g := newGateway(t)

	r := do(t, g.sock, http.MethodPost, "/v1/cron/jobs", `{"name":"x","every":"often","command":"true"}`)
	require.Equal(t, http.StatusBadRequest, r.status)
	var e struct {
		Error struct{ Code, Message, Flag, Rule string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &e))
	require.Equal(t, "invalid", e.Error.Code)
	require.Equal(t, "--every", e.Error.Flag)
	require.Contains(t, e.Error.Rule, `"often"`)
	require.Equal(t, e.Error.Flag+": "+e.Error.Rule, e.Error.Message)

	r = do(t, g.sock, http.MethodPost, "/v1/cron/jobs", `{"name":"x","every":"1h","command":"true"}`)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	var job apitype.CronJob
	require.NoError(t, json.Unmarshal(r.body, &job))

	for _, c := range []struct{ method, path, body, says string }{
		{http.MethodPost, "/v1/cron/jobs", `{"name":"y","every":"1h","command":"true","retries":3}`, `unknown field "retries"`},
		{http.MethodPost, "/v1/cron/jobs/x/edit", `{"cron":5}`, "field cron holds a JSON number, want a string"},
		{http.MethodPost, "/v1/cron/jobs/x/backfill", `{"from":"yesterday"}`, "request body"},
		{http.MethodPost, "/v1/cron/jobs/x/backfill", `{"from":"2026-01-01T00:00:00Z"}{}`, "more than one JSON value"},
		{http.MethodGet, "/v1/cron/jobs?all=maybe", "", `all "maybe" is not true or false`},
		{http.MethodGet, "/v1/cron/jobs?limit=1", "", `unknown query parameter "limit"`},
		{http.MethodGet, "/v1/cron/jobs/x/runs?limit=-1", "", `limit "-1"`},
		{http.MethodGet, "/v1/cron/jobs/x/runs?all=true", "", `unknown query parameter "all"`},
		{http.MethodPost, "/v1/cron/jobs/x/run?now=1", "", "takes no query parameters"},
		{http.MethodGet, "/v1/cron/status?x=1", "", "takes no query parameters"},
	} {
		r := do(t, g.sock, c.method, c.path, c.body)
		require.Equal(t, http.StatusBadRequest, r.status, "%s %s: %s", c.method, c.path, r.body)
		e := errorOf(t, r)
		require.Equal(t, "invalid", e.Error.Code, c.path)
		require.Contains(t, e.Error.Message, c.says, c.path)
	}

	r = do(t, g.sock, http.MethodGet, "/v1/cron/jobs/ghost", "")
	require.Equal(t, http.StatusNotFound, r.status)
	require.Equal(t, "not_found", errorOf(t, r).Error.Code)
	r = do(t, g.sock, http.MethodDelete, "/v1/cron/jobs/x", "")
	require.Equal(t, http.StatusMethodNotAllowed, r.status)
	r = do(t, g.sock, http.MethodGet, "/v1/cron/jobs?all=true", "")
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), job.ID)
	r = do(t, g.sock, http.MethodGet, "/v1/cron/status", "")
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), `"running":false`)
}

// requireSameJSON requires want and got to encode to the same JSON: jobs
// and runs compared by what crosses the wire (times by instant, without
// the monotonic clock).
func requireSameJSON(t *testing.T, want, got any, msgAndArgs ...any) {
	t.Helper()
	wb, err := json.Marshal(want)
	require.NoError(t, err)
	gb, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(wb), string(gb), msgAndArgs...)
}
