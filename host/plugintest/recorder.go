package plugintest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/errcode"
)

// recorder keeps, per flow, what the plugin did (its writes through the
// Host and how it answered each delivery) and the events it was handed,
// and makes a flow's next guarded write stale on request.
type recorder struct {
	eng *engine.Engine

	mu        sync.Mutex
	did       map[string][]string
	delivered map[string][]sdk.Event
	// stale holds the flows whose next guarded write an operator's write
	// makes stale; conflicts counts the conflicts so caused.
	stale     map[string]bool
	conflicts map[string]int
	// loseCreate loses the answer to the next CreateFlow; createsOn is
	// the flow its calls are noted on; creates are the calls so far
	// (createflow.go).
	loseCreate bool
	createsOn  string
	creates    []createCall
}

func newRecorder(eng *engine.Engine) *recorder {
	return &recorder{eng: eng, did: map[string][]string{}, delivered: map[string][]sdk.Event{},
		stale: map[string]bool{}, conflicts: map[string]int{}}
}

func (r *recorder) note(flowID, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.did[flowID] = append(r.did[flowID], fmt.Sprintf(format, args...))
}

// actions returns what the plugin did on flowID so far.
func (r *recorder) actions(flowID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.did[flowID]...)
}

// events returns the events of flowID the plugin acknowledged, in the
// order it did.
func (r *recorder) events(flowID string) []sdk.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sdk.Event(nil), r.delivered[flowID]...)
}

// makeStale arms the stale write of flowID's next guarded write.
func (r *recorder) makeStale(flowID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stale[flowID] = true
}

func (r *recorder) conflictsOn(flowID string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conflicts[flowID]
}

// beforeWrite is called before each guarded write of the plugin: when the
// flow is armed, an operator's empty update bumps its revision first, so
// the plugin's expected revision is stale.
func (r *recorder) beforeWrite(flowID string) {
	r.mu.Lock()
	armed := r.stale[flowID]
	delete(r.stale, flowID)
	r.mu.Unlock()
	if !armed {
		return
	}
	f, err := r.eng.GetFlow(flowID)
	if err == nil {
		_, err = r.eng.UpdateFlow(flowID, f.Revision, engine.FlowPatch{})
	}
	if err != nil {
		r.note(flowID, "(the harness could not make the write stale: %v)", err)
		return
	}
	r.note(flowID, "(an operator wrote the flow: revision %d is now stale)", f.Revision)
}

// after records a write's outcome: "ok" or the error's code.
func (r *recorder) after(flowID, call string, err error) {
	if errors.Is(err, sdk.ErrRevisionConflict) {
		r.mu.Lock()
		r.conflicts[flowID]++
		r.mu.Unlock()
	}
	r.note(flowID, "%s: %s", call, outcome(err))
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if c, ok := errcode.Of(err); ok {
		return c.Name
	}
	return "error: " + err.Error()
}

// handler wraps the live instance's delivery, recording each answer.
func (r *recorder) handler(lookup func(string) (pluginhost.Handler, error)) func(string) (pluginhost.Handler, error) {
	return func(name string) (pluginhost.Handler, error) {
		h, err := lookup(name)
		if err != nil {
			return nil, err
		}
		return deliveryRecorder{r: r, h: h}, nil
	}
}

type deliveryRecorder struct {
	r *recorder
	h pluginhost.Handler
}

func (d deliveryRecorder) HandleEvent(ctx context.Context, ev sdk.Event) error {
	err := d.h.HandleEvent(ctx, ev)
	retry := ""
	if ev.Deliveries > 0 {
		retry = fmt.Sprintf(" (delivery %d)", ev.Deliveries+1)
	}
	if err == nil {
		d.r.mu.Lock()
		d.r.delivered[ev.FlowID] = append(d.r.delivered[ev.FlowID], ev)
		d.r.mu.Unlock()
		d.r.note(ev.FlowID, "event %d %s%s: acknowledged", ev.Seq, ev.Type, retry)
	} else {
		d.r.note(ev.FlowID, "event %d %s%s: failed: %v", ev.Seq, ev.Type, retry, err)
	}
	return err
}

// recordingHost is the Host a plugin instance is served under the
// harness: the gateway's own, with every write recorded and made stale
// on request.
type recordingHost struct {
	sdk.Host
	r *recorder
}

func (h recordingHost) CreateTask(ctx context.Context, req sdk.TaskRequest) (*sdk.Task, bool, error) {
	t, created, err := h.Host.CreateTask(ctx, req)
	what := "CreateTask " + req.IdempotencyKey
	if err == nil && !created {
		what += " (already there)"
	}
	h.r.after(req.FlowID, what, err)
	return t, created, err
}

// guarded runs one guarded write of flowID through the recorder.
func (h recordingHost) guarded(flowID, call string, write func() (*sdk.Flow, error)) (*sdk.Flow, error) {
	h.r.beforeWrite(flowID)
	f, err := write()
	if err == nil {
		call += fmt.Sprintf(" → %s, revision %d", f.Status, f.Revision)
	}
	h.r.after(flowID, call, err)
	return f, err
}

func (h recordingHost) UpdateFlow(ctx context.Context, id string, expected int64, u sdk.FlowUpdate) (*sdk.Flow, error) {
	return h.guarded(id, fmt.Sprintf("UpdateFlow at revision %d", expected), func() (*sdk.Flow, error) { return h.Host.UpdateFlow(ctx, id, expected, u) })
}

func (h recordingHost) Advance(ctx context.Context, id string, expected int64, a sdk.AdvanceRequest) (sdk.AdvanceResult, error) {
	var res sdk.AdvanceResult
	_, err := h.guarded(id, fmt.Sprintf("Advance at revision %d with %d tasks", expected, len(a.Tasks)), func() (*sdk.Flow, error) {
		var err error
		res, err = h.Host.Advance(ctx, id, expected, a)
		return res.Flow, err
	})
	return res, err
}

func (h recordingHost) SetWaiting(ctx context.Context, id string, expected int64, w sdk.WaitRequest) (*sdk.Flow, error) {
	return h.guarded(id, fmt.Sprintf("SetWaiting at revision %d", expected), func() (*sdk.Flow, error) { return h.Host.SetWaiting(ctx, id, expected, w) })
}

func (h recordingHost) Resume(ctx context.Context, id string, expected int64, rr sdk.ResumeRequest) (*sdk.Flow, error) {
	return h.guarded(id, fmt.Sprintf("Resume at revision %d", expected), func() (*sdk.Flow, error) { return h.Host.Resume(ctx, id, expected, rr) })
}

func (h recordingHost) Finish(ctx context.Context, id string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	return h.guarded(id, fmt.Sprintf("Finish at revision %d", expected), func() (*sdk.Flow, error) { return h.Host.Finish(ctx, id, expected, e) })
}

func (h recordingHost) Fail(ctx context.Context, id string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	return h.guarded(id, fmt.Sprintf("Fail at revision %d (%s)", expected, e.BlockedSummary), func() (*sdk.Flow, error) { return h.Host.Fail(ctx, id, expected, e) })
}

func (h recordingHost) RequestCancel(ctx context.Context, id string, expected int64) (*sdk.Flow, error) {
	return h.guarded(id, fmt.Sprintf("RequestCancel at revision %d", expected), func() (*sdk.Flow, error) { return h.Host.RequestCancel(ctx, id, expected) })
}

func (h recordingHost) CancelTask(ctx context.Context, taskID string) (*sdk.Task, error) {
	t, err := h.Host.CancelTask(ctx, taskID)
	if t != nil {
		h.r.after(t.FlowID, "CancelTask "+taskID, err)
	}
	return t, err
}

func (h recordingHost) WakeAt(ctx context.Context, flowID string, at time.Time, key string) error {
	err := h.Host.WakeAt(ctx, flowID, at, key)
	h.r.after(flowID, fmt.Sprintf("WakeAt %q at %s", key, at.UTC().Format(time.RFC3339)), err)
	return err
}
