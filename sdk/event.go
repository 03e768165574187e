package sdk

import (
	"encoding/json"
	"time"
)

// EventType names something a controller must react to.
type EventType string

// Event types delivered to a managed flow's controller.
const (
	EventFlowStarted         EventType = "flow.started"
	EventTaskFinished        EventType = "task.finished"
	EventTaskMilestone       EventType = "task.milestone"
	EventFlowResumed         EventType = "flow.resumed"
	EventFlowCancelRequested EventType = "flow.cancel_requested"
	// EventFlowWoken: a wake the controller set with Host.WakeAt came
	// due; Data is a Woken.
	EventFlowWoken EventType = "flow.woken"
)

// Woken is the data of a flow.woken event: the wake's key and the time it
// was set for. The event comes at or after At, once per key.
type Woken struct {
	Key string    `json:"key"`
	At  time.Time `json:"at"`
}

// Event is one entry of a flow's outbox. It is written in the same
// transaction as the change that caused it; Seq grows by one per flow, and
// events are delivered in Seq order, at least once.
type Event struct {
	FlowID string    `json:"flow_id"`
	Seq    int64     `json:"seq"`
	Type   EventType `json:"type"`
	// TaskID is set for task events.
	TaskID string `json:"task_id,omitempty"`
	// Data carries the event's details, such as a finished task's status.
	Data      json.RawMessage `json:"data,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	// Deliveries counts the failed deliveries before this one: a
	// controller sees the same event again with a higher count.
	Deliveries int `json:"deliveries,omitempty"`
	// LastError is why the last delivery failed.
	LastError string `json:"last_error,omitempty"`
	// RetryAt is when the event may be delivered again.
	RetryAt time.Time `json:"retry_at,omitzero"`
	// Parked is set when deliveries failed too often: the flow is blocked
	// with the error, and delivery resumes when the flow is unblocked.
	Parked bool `json:"parked,omitempty"`
}

// TaskSummary counts a set of tasks, as the reference's
// TaskRegistrySummary does. Active is queued plus running; Failures is
// failed plus timed_out plus lost. ByRuntime counts by Task.Runtime (cli,
// pipeline, cron, agent or a plugin's kind), so a reader sees which kind
// of work fills the queue or fails.
type TaskSummary struct {
	Total     int                `json:"total"`
	Active    int                `json:"active"`
	Terminal  int                `json:"terminal"`
	Failures  int                `json:"failures"`
	ByStatus  map[TaskStatus]int `json:"by_status"`
	ByRuntime map[string]int     `json:"by_runtime"`
}

// Summarize counts tasks by status and by runtime.
func Summarize(tasks []*Task) TaskSummary {
	s := TaskSummary{ByStatus: map[TaskStatus]int{}, ByRuntime: map[string]int{}}
	for _, t := range tasks {
		s.Total++
		s.ByStatus[t.Status]++
		s.ByRuntime[t.Runtime]++
		if t.Status.Active() {
			s.Active++
		} else {
			s.Terminal++
		}
		if t.Status.Failure() {
			s.Failures++
		}
	}
	return s
}
