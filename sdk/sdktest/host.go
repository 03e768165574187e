package sdktest

import (
	"context"
	"encoding/json"
	"fmt"

	"sync"
	"time"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// ownerKey is the owner of every flow a Host makes.
const ownerKey = "sdktest"

// Host is an in-memory sdk.Host that keeps flows, tasks and per-flow event
// outboxes by the gateway engine's rules: status moves follow the state
// machine of package sdk (sdk.CheckFlowMove, sdk.CheckTaskMove), the same
// functions the engine calls, so nothing leaves a terminal status
// (sdk.ErrTerminal) and a flow with a cancel request takes no new tasks and
// moves only toward cancelled, failed or lost (sdk.ErrCancelRequested);
// every flow write bumps the revision and a stale expected revision fails
// with a *sdk.RevisionConflictError carrying the current flow; a repeated
// idempotency key returns the first task; each change queues the events
// the gateway queues for it. RunHostConformance checks all of this against
// the gateway. Its flows are all managed.
//
// Besides the sdk.Host methods a controller calls, it has the gateway's
// side: NewFlow, StartTask, FinishTask, Events and Ack. Records are
// stored as JSON, as the gateway stores them, so every read returns a copy.
// Use NewHost; a Host is safe for concurrent use.
type Host struct {
	mu        sync.Mutex
	flows     map[string][]byte   // flow id → sdk.Flow JSON
	tasks     map[string][]byte   // task id → sdk.Task JSON
	flowTasks map[string][]string // flow id → task ids, oldest first
	keys      map[string]string   // idempotency key → task id
	outbox    map[string][]sdk.Event
	seq       map[string]int64
	continued map[string]string                // chain id → its continuation's flow id
	wakes     map[string]map[string]*wakeEntry // flow id → key → wake
	stages    map[string]providedStage         // stage name → what ProvideStage gave
	kept      map[string]map[string][]byte     // flow id → digest → kept value
	stored    map[[2]string][]byte             // (scope, key) → stored value
	logs      []LogEntry
	lastID    int
	// controller is who the sdk.Host calls come from: the controller of
	// the flows CreateFlow makes (SetController).
	controller string
	// maxActive caps the controller's active flows for CreateFlow; 0 is
	// no cap (SetMaxActiveFlows).
	maxActive int
	// flowKeys maps a CreateFlow idempotency key to its flow's id.
	flowKeys map[string]string
}

var _ sdk.Host = (*Host)(nil)

// LogEntry is one Log call a controller made.
type LogEntry struct {
	Level   string
	Message string
	Fields  map[string]string
}

// NewHost returns an empty Host.
func NewHost() *Host {
	return &Host{
		flows:      map[string][]byte{},
		tasks:      map[string][]byte{},
		flowTasks:  map[string][]string{},
		keys:       map[string]string{},
		outbox:     map[string][]sdk.Event{},
		seq:        map[string]int64{},
		continued:  map[string]string{},
		controller: "sdktest",
		flowKeys:   map[string]string{},
	}
}

// now is the engine's clock: UTC, to the microsecond, which JSON keeps.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func (h *Host) nextID(prefix string) string {
	h.lastID++
	return fmt.Sprintf("%s-%d", prefix, h.lastID)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", sdk.ErrInvalid, fmt.Sprintf(format, args...))
}

func checkJSON(field string, b json.RawMessage) error {
	if b != nil && !json.Valid(b) {
		return invalid("%s is not valid JSON", field)
	}
	return nil
}

// putFlow stores f as it is.
func (h *Host) putFlow(f *sdk.Flow) {
	b, err := json.Marshal(f)
	if err != nil {
		panic(fmt.Sprintf("sdktest: encode flow %s: %v", f.ID, err))
	}
	h.flows[f.ID] = b
}

// saveFlow stores a change to f: the next revision, stamped now.
func (h *Host) saveFlow(f *sdk.Flow) {
	f.Revision++
	f.UpdatedAt = now()
	h.putFlow(f)
}

func (h *Host) loadFlow(id string) (*sdk.Flow, error) {
	b, ok := h.flows[id]
	if !ok {
		return nil, fmt.Errorf("%w: flow %q does not exist", sdk.ErrNotFound, id)
	}
	f := new(sdk.Flow)
	if err := json.Unmarshal(b, f); err != nil {
		return nil, err
	}
	return f, nil
}

func (h *Host) putTask(t *sdk.Task) {
	b, err := json.Marshal(t)
	if err != nil {
		panic(fmt.Sprintf("sdktest: encode task %s: %v", t.ID, err))
	}
	h.tasks[t.ID] = b
}

func (h *Host) loadTask(id string) (*sdk.Task, error) {
	b, ok := h.tasks[id]
	if !ok {
		return nil, fmt.Errorf("%w: task %q does not exist", sdk.ErrNotFound, id)
	}
	t := new(sdk.Task)
	if err := json.Unmarshal(b, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (h *Host) appendEvent(flowID string, typ sdk.EventType, taskID string, data json.RawMessage) {
	h.seq[flowID]++
	h.outbox[flowID] = append(h.outbox[flowID], sdk.Event{
		FlowID: flowID, Seq: h.seq[flowID], Type: typ, TaskID: taskID, Data: data, CreatedAt: now(),
	})
}

// Events returns the events of flow flowID not yet acknowledged, oldest
// first.
func (h *Host) Events(flowID string) []sdk.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sdk.Event(nil), h.outbox[flowID]...)
}

// Ack removes event seq of flow flowID from its outbox, as the gateway
// does once the controller handled it. Acknowledging an event that is gone
// does nothing.
func (h *Host) Ack(flowID string, seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	evs := h.outbox[flowID]
	for i, ev := range evs {
		if ev.Seq == seq {
			h.outbox[flowID] = append(evs[:i:i], evs[i+1:]...)
			return
		}
	}
}

// Logs returns what controllers logged through Log, in order.
func (h *Host) Logs() []LogEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]LogEntry(nil), h.logs...)
}

// Log implements sdk.Host; Logs returns what was logged.
func (h *Host) Log(ctx context.Context, level, msg string, fields map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var copied map[string]string
	if fields != nil {
		copied = make(map[string]string, len(fields))
		for k, v := range fields {
			copied[k] = v
		}
	}
	h.logs = append(h.logs, LogEntry{Level: level, Message: msg, Fields: copied})
	return nil
}

// move changes f's status as the engine does, through flowrule.Move: never
// out of a terminal status, only along the table, under a cancel request
// only toward cancelled, failed or lost, with the same fields kept.
func move(f *sdk.Flow, to sdk.FlowStatus) error { return flowrule.Move(f, to, now()) }

// expect loads flow id and checks that its revision is expected. The
// caller holds h.mu.
func (h *Host) expect(id string, expected int64) (*sdk.Flow, error) {
	f, err := h.loadFlow(id)
	if err != nil {
		return nil, err
	}
	if f.Revision != expected {
		return nil, &sdk.RevisionConflictError{Expected: expected, Current: f}
	}
	return f, nil
}

// guarded loads flow id at the expected revision, lets fn change it and
// saves it. fn must fail before it queues events.
func (h *Host) guarded(ctx context.Context, id string, expected int64, fn func(f *sdk.Flow) error) (*sdk.Flow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.expect(id, expected)
	if err != nil {
		return nil, err
	}
	if err := fn(f); err != nil {
		return nil, err
	}
	h.saveFlow(f)
	return f, nil
}
