package scheduler_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/sdk"
)

// hook is a webhook receiver on loopback that records what it was sent
// and answers with status.
type hook struct {
	mu     sync.Mutex
	status int
	got    []map[string]any
	events []string
	keys   []string // Idempotency-Key of each request
	srv    *httptest.Server
}

func newHook(t *testing.T, status int) *hook {
	h := &hook{status: status}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			m = map[string]any{"unparsed": string(b)}
		}
		h.mu.Lock()
		h.got = append(h.got, m)
		h.events = append(h.events, r.Header.Get("X-Flowgate-Event"))
		h.keys = append(h.keys, r.Header.Get("Idempotency-Key"))
		code := h.status
		h.mu.Unlock()
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "receiver says no")
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) received() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.got...)
}

// finishWithResult plays the runner for a task that printed stdout.
func (e *loopEnv) finishWithResult(id string, status sdk.TaskStatus, stdout string) {
	e.t.Helper()
	_, err := e.eng.StartTask(id, engine.StartInput{})
	require.NoError(e.t, err)
	in := engine.FinishInput{Status: status, Result: &sdk.Result{Stdout: stdout, Summary: "done"}}
	if status != sdk.TaskSucceeded {
		in.Error = "exit 1"
	}
	_, err = e.eng.FinishTask(id, in)
	require.NoError(e.t, err)
}

func (e *loopEnv) deliver() {
	e.t.Helper()
	require.NoError(e.t, e.sched.DeliverOnce(context.Background()))
}

func TestWebhookDeliversTheRunResult(t *testing.T) {
	h := newHook(t, http.StatusNoContent)
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(scheduler.JobInput{Name: "report", Schedule: schedule.Flags{Cron: "* * * * *"}, Command: "echo hi", Webhook: h.srv.URL, Session: "session:desk"})
	e.tickAt(minute(1))
	run := e.runs(j.ID)[0]
	e.deliver()
	require.Empty(t, h.received(), "nothing is delivered before the run ends")

	e.finishWithResult(run.TaskID, sdk.TaskSucceeded, "hello\n")
	e.tickAt(minute(1).Add(2 * time.Second))
	run = e.runs(j.ID)[0]
	require.Equal(t, scheduler.DeliveryPending, run.Delivery, "queued with the end of the run")
	e.deliver()

	got := h.received()
	require.Len(t, got, 1)
	p := got[0]
	require.Equal(t, scheduler.EventRunFinished, p["event"])
	require.Equal(t, j.ID, p["job_id"])
	require.Equal(t, "report", p["job_name"])
	require.Equal(t, scheduler.RunID(j.ID, minute(1)), p["run_id"])
	require.Equal(t, minute(1).Format(time.RFC3339), p["scheduled"])
	require.Equal(t, scheduler.RunOK, p["status"])
	require.Equal(t, run.TaskID, p["task_id"])
	require.Equal(t, "session:desk", p["session"])
	require.NotEmpty(t, p["started_at"])
	require.NotEmpty(t, p["ended_at"])
	require.Equal(t, map[string]any{"stdout": "hello\n", "summary": "done"}, p["result"])

	run = e.runs(j.ID)[0]
	require.Equal(t, scheduler.DeliveryDelivered, run.Delivery)
	require.Empty(t, run.DeliveryError)
	job, err := e.sched.Jobs().Get(j.ID)
	require.NoError(t, err)
	require.Equal(t, scheduler.DeliveryDelivered, job.State.LastDelivery)

	e.deliver()
	require.Len(t, h.received(), 1, "a delivered entry is not sent again")
}

// A failing endpoint is recorded as a delivery error on the run, retried
// with backoff, and given up on after the attempts; the run stays ok and
// the job's failure count is untouched.
func TestFailingWebhookIsADeliveryErrorNotARunFailure(t *testing.T) {
	h := newHook(t, http.StatusInternalServerError)
	e := newLoopEnv(t, scheduler.Config{DeliveryAttempts: 3})
	j := e.add(scheduler.JobInput{Name: "report", Schedule: schedule.Flags{Cron: "0 * * * *"}, Command: "true", Webhook: h.srv.URL})
	r, err := e.sched.RunNow(j.ID, "")
	require.NoError(t, err)
	e.finishWithResult(r.TaskID, sdk.TaskSucceeded, "")
	e.tickAt(t0.Add(time.Second))

	e.deliver()
	run := e.runs(j.ID)[0]
	require.Equal(t, scheduler.RunOK, run.Status)
	require.Equal(t, scheduler.DeliveryPending, run.Delivery, "to be tried again")
	require.Contains(t, run.DeliveryError, "500")
	require.Contains(t, run.DeliveryError, "receiver says no")

	e.deliver()
	require.Len(t, h.received(), 1, "the retry waits for its backoff")
	e.clock.set(t0.Add(15 * time.Second))
	e.deliver()
	require.Len(t, h.received(), 2)
	e.clock.set(t0.Add(2 * time.Minute))
	e.deliver()
	require.Len(t, h.received(), 3)

	run = e.runs(j.ID)[0]
	require.Equal(t, scheduler.RunOK, run.Status)
	require.Equal(t, scheduler.DeliveryFailed, run.Delivery)
	require.Contains(t, run.DeliveryError, "500")
	job, err := e.sched.Jobs().Get(j.ID)
	require.NoError(t, err)
	require.Equal(t, scheduler.DeliveryFailed, job.State.LastDelivery)
	require.Equal(t, 0, job.State.ConsecutiveErrors)
	require.Equal(t, scheduler.RunOK, job.State.LastStatus)

	e.clock.set(t0.Add(time.Hour))
	e.deliver()
	require.Len(t, h.received(), 3, "given up after the attempts")
}

func TestFailureAlertAfterNWithCooldown(t *testing.T) {
	results, alerts := newHook(t, http.StatusOK), newHook(t, http.StatusOK)
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(scheduler.JobInput{Name: "flaky", Schedule: schedule.Flags{Cron: "0 0 1 1 *"}, Command: "false",
		Webhook: results.srv.URL, FailureAlertAfter: 2, FailureAlertCooldown: "1h", FailureAlertWebhook: alerts.srv.URL})
	at := t0
	runOnce := func(status sdk.TaskStatus) scheduler.Run {
		t.Helper()
		at = at.Add(time.Minute)
		e.clock.set(at)
		r, err := e.sched.RunNow(j.ID, "")
		require.NoError(t, err)
		e.finishWithResult(r.TaskID, status, "")
		e.tickAt(at.Add(time.Second))
		e.deliver()
		return e.runs(j.ID)[0]
	}

	require.Empty(t, runOnce(sdk.TaskFailed).Alert, "one failure is below the threshold")
	require.Empty(t, alerts.received())
	r := runOnce(sdk.TaskFailed)
	require.Equal(t, scheduler.DeliveryDelivered, r.Alert)
	require.Len(t, alerts.received(), 1)
	a := alerts.received()[0]
	require.Equal(t, scheduler.EventFailureAlert, a["event"])
	require.Equal(t, float64(2), a["consecutive_errors"])
	require.Equal(t, scheduler.RunError, a["status"])
	require.Equal(t, "task failed: exit 1", a["error"])

	require.Empty(t, runOnce(sdk.TaskFailed).Alert, "within the cooldown")
	require.Len(t, alerts.received(), 1)

	at = at.Add(time.Hour)
	require.Equal(t, scheduler.DeliveryDelivered, runOnce(sdk.TaskFailed).Alert, "the cooldown has passed")
	require.Len(t, alerts.received(), 2)

	runOnce(sdk.TaskSucceeded)
	at = at.Add(2 * time.Hour)
	require.Empty(t, runOnce(sdk.TaskFailed).Alert, "a success starts the count again")
	require.Len(t, alerts.received(), 2)
	require.Len(t, results.received(), 6, "every run's result went to the delivery target")
	for _, ev := range results.events {
		require.Equal(t, scheduler.EventRunFinished, ev)
	}
}

// Without a destination of its own, an alert goes to the job's delivery.
func TestFailureAlertFallsBackToTheDelivery(t *testing.T) {
	h := newHook(t, http.StatusOK)
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(scheduler.JobInput{Name: "x", Schedule: schedule.Flags{Cron: "0 0 1 1 *"}, Command: "false", Webhook: h.srv.URL, FailureAlertAfter: 1})
	r, err := e.sched.RunNow(j.ID, "")
	require.NoError(t, err)
	e.finishWithResult(r.TaskID, sdk.TaskFailed, "")
	e.tickAt(t0.Add(time.Second))
	e.deliver()
	require.ElementsMatch(t, []string{scheduler.EventRunFinished, scheduler.EventFailureAlert}, h.events)
}

func TestNotifyCommandGetsTheReportOnStdin(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.json")
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(scheduler.JobInput{Name: "cmd", Schedule: schedule.Flags{Cron: "0 0 1 1 *"}, Command: "true",
		NotifyCommand: "cat > '" + out + "'"})
	r, err := e.sched.RunNow(j.ID, "")
	require.NoError(t, err)
	e.finishWithResult(r.TaskID, sdk.TaskSucceeded, "42\n")
	e.tickAt(t0.Add(time.Second))
	e.deliver()
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep scheduler.Report
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, r.ID, rep.RunID)
	require.Equal(t, scheduler.RunOK, rep.Status)
	require.Equal(t, scheduler.DeliveryDelivered, e.runs(j.ID)[0].Delivery)
}

// A delivery queued before a crash is sent by the next scheduler over the
// same store; a one-shot deleted after its run still reports it.
func TestQueuedDeliverySurvivesRestartAndJobRemoval(t *testing.T) {
	h := newHook(t, http.StatusOK)
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(scheduler.JobInput{Name: "once", Schedule: schedule.Flags{At: "+1m"}, Command: "true", Webhook: h.srv.URL, DeleteAfterRun: true})
	e.tickAt(t0.Add(2 * time.Minute))
	run := e.runs(j.ID)[0]
	e.finishWithResult(run.TaskID, sdk.TaskSucceeded, "")
	e.tickAt(t0.Add(3 * time.Minute))
	_, err := e.sched.Jobs().Get(j.ID)
	require.ErrorIs(t, err, scheduler.ErrJobNotFound)

	restarted := scheduler.New(e.eng, scheduler.Config{Now: e.clock.now})
	require.NoError(t, restarted.DeliverOnce(context.Background()))
	got := h.received()
	require.Len(t, got, 1)
	require.Equal(t, "once", got[0]["job_name"])
	require.Equal(t, scheduler.DeliveryDelivered, e.runs(j.ID)[0].Delivery)
}

// A pipeline run's output kept in the store (on a shared store, where
// another gateway may have finished the flow) is what its webhook gets:
// from the flow's output, or, for a flow that finished before flows had
// one, from where its state named it.
func TestWebhookDeliversAKeptPipelineOutput(t *testing.T) {
	for name, end := range map[string]func(sum string) engine.EndInput{
		"output": func(sum string) engine.EndInput {
			return engine.EndInput{Output: &sdk.Output{File: &sdk.OutputFile{SHA256: sum, Kept: true}}}
		},
		"state of before outputs": func(sum string) engine.EndInput {
			state, err := json.Marshal(map[string]any{"output_file": map[string]any{"sha256": sum, "kept": true}})
			require.NoError(t, err)
			return engine.EndInput{State: state}
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHook(t, http.StatusNoContent)
			e := newLoopEnv(t, scheduler.Config{})
			file := filepath.Join(t.TempDir(), "big.lobster")
			require.NoError(t, os.WriteFile(file, []byte("steps: []\n"), 0o600))
			j := e.add(scheduler.JobInput{Name: "big", Schedule: schedule.Flags{Cron: "* * * * *"}, Pipeline: file, Webhook: h.srv.URL})
			e.tickAt(minute(1))
			f, err := e.eng.GetFlow(e.runs(j.ID)[0].FlowID)
			require.NoError(t, err)
			output := []byte(`["` + strings.Repeat("x", 6000) + `"]`)
			sum, err := e.eng.Keep(f.ID, output)
			require.NoError(t, err)
			_, err = e.eng.Finish(f.ID, f.Revision, end(sum))
			require.NoError(t, err)
			e.tickAt(minute(1).Add(2 * time.Second))
			e.deliver()

			got := h.received()
			require.Len(t, got, 1)
			require.Equal(t, []any{strings.Repeat("x", 6000)}, got[0]["result"])
		})
	}
}
