package scheduler_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// jobClock is a settable time source for JobsConfig.Now.
type jobClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *jobClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *jobClock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

func newJobs(t *testing.T, c *jobClock) *scheduler.Jobs {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "jobs.db"), store.Options{Owner: t.Name()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	return scheduler.NewJobs(eng, scheduler.JobsConfig{Now: c.now})
}

func str(s string) *string { return &s }

func boolp(b bool) *bool { return &b }

var jt0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func TestJobsAddGetList(t *testing.T) {
	t.Parallel()
	c := &jobClock{t: jt0}
	js := newJobs(t, c)

	daily, err := js.Add(scheduler.JobInput{Name: "daily", Schedule: schedule.Flags{Cron: "0 9 * * *", TZ: "America/New_York", Exact: true}, Command: "make report"})
	require.NoError(t, err)
	require.Len(t, daily.ID, 12)
	require.Equal(t, time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC), daily.State.NextRun.UTC(), "09:00 EDT")
	require.Equal(t, jt0, daily.CreatedAt)

	tick, err := js.Add(scheduler.JobInput{Name: "tick", Schedule: schedule.Flags{Every: "10m"}, Pipeline: "/w/tick.lobster", ArgsJSON: `{"a": 1}`})
	require.NoError(t, err)
	require.Equal(t, jt0.Add(10*time.Minute), tick.State.NextRun)
	require.JSONEq(t, `{"a":1}`, string(tick.Payload.Args))

	off, err := js.Add(scheduler.JobInput{Name: "off", Schedule: schedule.Flags{Every: "1m"}, Command: "true", Disabled: true})
	require.NoError(t, err)
	require.True(t, off.State.NextRun.IsZero())

	for _, ref := range []string{daily.ID, "daily"} {
		got, err := js.Get(ref)
		require.NoError(t, err)
		require.Equal(t, daily.ID, got.ID)
		require.Equal(t, daily.State.NextRun.UTC(), got.State.NextRun.UTC())
	}
	_, err = js.Get("nobody")
	require.ErrorIs(t, err, scheduler.ErrJobNotFound)
	require.ErrorIs(t, err, sdk.ErrNotFound)

	list, err := js.List(false)
	require.NoError(t, err)
	require.Equal(t, []string{"tick", "daily"}, names(list), "by next run")
	list, err = js.List(true)
	require.NoError(t, err)
	require.Equal(t, []string{"tick", "daily", "off"}, names(list), "jobs that will not run come last")

	_, err = js.Add(scheduler.JobInput{Name: "daily", Schedule: schedule.Flags{Every: "1h"}, Command: "true"})
	var taken *scheduler.NameTakenError
	require.ErrorAs(t, err, &taken)
	require.Equal(t, daily.ID, taken.ID)
	require.ErrorIs(t, err, sdk.ErrInvalid)
}

func names(jobs []scheduler.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}

func TestJobsEdit(t *testing.T) {
	t.Parallel()
	c := &jobClock{t: jt0}
	js := newJobs(t, c)
	j, err := js.Add(scheduler.JobInput{Name: "job", Schedule: schedule.Flags{Every: "1h"}, Pipeline: "/w/a.lobster", ArgsJSON: `{"x":1}`, Webhook: "http://h/x", FailureAlertAfter: 2})
	require.NoError(t, err)

	c.set(jt0.Add(90 * time.Minute))
	e, err := js.Edit(j.ID, scheduler.JobPatch{Overlap: str("allow_all")})
	require.NoError(t, err)
	require.Equal(t, j.Schedule.Anchor, e.Schedule.Anchor, "an unchanged --every keeps its phase")
	require.Equal(t, jt0.Add(2*time.Hour), e.State.NextRun, "next run recomputed from now on the old phase")
	require.Equal(t, jt0.Add(90*time.Minute), e.UpdatedAt)
	require.Equal(t, schedule.OverlapAllowAll, e.Overlap)
	require.Equal(t, j.Payload, e.Payload)
	require.Equal(t, j.Delivery, e.Delivery)
	require.Equal(t, j.FailureAlert, e.FailureAlert)

	e, err = js.Edit("job", scheduler.JobPatch{Name: str("renamed"), Cron: str("*/5 * * * *"), Exact: boolp(true), Command: str("echo hi"), NotifyCommand: str("cat")})
	require.NoError(t, err)
	require.Equal(t, schedule.KindCron, e.Schedule.Kind)
	require.Equal(t, jt0.Add(95*time.Minute), e.State.NextRun)
	require.Equal(t, scheduler.Payload{Kind: scheduler.PayloadCommand, Command: "echo hi"}, e.Payload)
	require.Equal(t, scheduler.Delivery{Kind: scheduler.DeliveryCommand, Command: "cat"}, e.Delivery)
	_, err = js.Get("job")
	require.ErrorIs(t, err, scheduler.ErrJobNotFound, "the old name is released")
	_, err = js.Add(scheduler.JobInput{Name: "job", Schedule: schedule.Flags{Every: "1h"}, Command: "true"})
	require.NoError(t, err)

	_, err = js.Edit("renamed", scheduler.JobPatch{NotifyCommand: str("")})
	require.ErrorContains(t, err, "--failure-alert-after: an alert needs somewhere to go", "alerts with no delivery left and no destination of their own")

	e, err = js.Edit("renamed", scheduler.JobPatch{TZ: str("Asia/Tokyo"), Cron: str("0 9 * * *"), Webhook: str(""), FailureAlertWebhook: str("https://example.com/alerts")})
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC), e.State.NextRun.UTC(), "09:00 JST")
	require.Equal(t, scheduler.DeliveryNone, e.Delivery.Kind)
	require.Equal(t, &scheduler.Delivery{Kind: scheduler.DeliveryWebhook, URL: "https://example.com/alerts"}, e.FailureAlert.To)
	require.Equal(t, []scheduler.Delivery{*e.FailureAlert.To}, e.FailureAlert.Destinations(e))

	_, err = js.Edit("renamed", scheduler.JobPatch{Name: str("job")})
	require.ErrorAs(t, err, new(*scheduler.NameTakenError))
	_, err = js.Edit("renamed", scheduler.JobPatch{Every: str("1h"), TZ: str("UTC")})
	var fe *schedule.FlagError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "--tz", fe.Flag)
	got, err := js.Get("renamed")
	require.NoError(t, err)
	require.Equal(t, e, got, "a refused edit changes nothing")

	e, err = js.Edit("renamed", scheduler.JobPatch{Every: str("1h")})
	require.NoError(t, err, "a zone kept from --cron lapses with it")
	require.Equal(t, schedule.KindEvery, e.Schedule.Kind)
	require.Empty(t, e.Schedule.TZ)
}

func TestJobsEnableDisableRemove(t *testing.T) {
	t.Parallel()
	c := &jobClock{t: jt0}
	js := newJobs(t, c)
	once, err := js.Add(scheduler.JobInput{Name: "once", Schedule: schedule.Flags{At: "+30m"}, Command: "true", DeleteAfterRun: true})
	require.NoError(t, err)
	require.Equal(t, jt0.Add(30*time.Minute), once.State.NextRun)

	require.Nil(t, once.LastToggle, "a new job has not been enabled or disabled")

	d, err := js.SetEnabled("once", false, "alice")
	require.NoError(t, err)
	require.False(t, d.Enabled)
	require.True(t, d.State.NextRun.IsZero())
	require.Equal(t, &scheduler.Toggle{Enabled: false, By: "alice", At: jt0}, d.LastToggle)
	again, err := js.SetEnabled("once", false, "bob")
	require.NoError(t, err)
	require.Equal(t, d, again, "disabling a disabled job changes nothing, not even who disabled it")

	c.set(jt0.Add(time.Hour))
	_, err = js.SetEnabled("once", true, "bob")
	require.ErrorIs(t, err, sdk.ErrInvalid, "a past one-shot cannot be enabled")
	require.Contains(t, err.Error(), "--at TIME")
	got, err := js.Get("once")
	require.NoError(t, err)
	require.Equal(t, d.LastToggle, got.LastToggle, "a refused enable records nothing")

	e, err := js.Edit("once", scheduler.JobPatch{At: str("+1h")})
	require.NoError(t, err)
	require.False(t, e.Enabled)
	require.True(t, e.DeleteAfterRun)
	require.Equal(t, d.LastToggle, e.LastToggle, "an edit keeps who last disabled the job")
	e, err = js.SetEnabled(e.ID, true, "bob")
	require.NoError(t, err)
	require.Equal(t, jt0.Add(2*time.Hour), e.State.NextRun)
	require.Equal(t, &scheduler.Toggle{Enabled: true, By: "bob", At: jt0.Add(time.Hour)}, e.LastToggle)

	c.set(jt0.Add(90 * time.Minute))
	e, err = js.Edit("once", scheduler.JobPatch{Disabled: boolp(true)})
	require.NoError(t, err)
	require.Equal(t, &scheduler.Toggle{Enabled: false, At: jt0.Add(90 * time.Minute)}, e.LastToggle, "an edit that disables the job is kept, naming nobody")

	e, err = js.Edit("once", scheduler.JobPatch{Every: str("15m")})
	require.NoError(t, err)
	require.False(t, e.DeleteAfterRun, "--delete-after-run lapses when the job stops being a one-shot")

	r, err := js.Remove("once")
	require.NoError(t, err)
	require.Equal(t, e.ID, r.ID)
	_, err = js.Remove("once")
	require.ErrorIs(t, err, scheduler.ErrJobNotFound)
	list, err := js.List(true)
	require.NoError(t, err)
	require.Empty(t, list)
}

func TestJobsConcurrentAddsKeepNamesUnique(t *testing.T) {
	t.Parallel()
	js := newJobs(t, &jobClock{t: jt0})
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = js.Add(scheduler.JobInput{Name: "same", Schedule: schedule.Flags{Every: "1h"}, Command: "true"})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		require.ErrorAs(t, err, new(*scheduler.NameTakenError))
	}
	require.Equal(t, 1, ok)
	list, err := js.List(true)
	require.NoError(t, err)
	require.Len(t, list, 1)
}

func TestJobsIDsComeFromRand(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "jobs.db"), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	js := scheduler.NewJobs(eng, scheduler.JobsConfig{Now: func() time.Time { return jt0 }, Rand: bytes.NewReader([]byte{1, 2, 3, 4, 5, 6})})
	j, err := js.Add(scheduler.JobInput{Name: "a", Schedule: schedule.Flags{Every: "1h"}, Command: "true"})
	require.NoError(t, err)
	require.Equal(t, "010203040506", j.ID)
	_, err = js.Add(scheduler.JobInput{Name: "b", Schedule: schedule.Flags{Every: "1h"}, Command: "true"})
	require.Error(t, err, "an exhausted entropy source is an error")
	require.False(t, errors.Is(err, sdk.ErrInvalid))
}
