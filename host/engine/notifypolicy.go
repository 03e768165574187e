package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// A flow's notify policy decides which of its status changes queue a
// notice to each of its destinations (sdk.Flow.NotifyTo), in the
// transaction that writes the change: NotifyDoneOnly its end,
// NotifyStateChanges every change, NotifySilent none. Each notice goes
// to one destination, so that one that keeps failing does not make the
// others receive a message twice. Its key is
// "<flow>/<status>/r<revision>/<destination index>": the flow's revision
// tells apart two visits to one status (running, waiting, running), and
// one write never queues the same key twice.
//
// A task's milestones named in its spec's NotifyOnMilestone queue a
// task.milestone notice to each of its flow's destinations the first
// time each is reported, keyed "<task>/milestone/<name>/<destination
// index>". The task records the name in MilestonesNoticed in the same
// write; a delivered notice is deleted, so that record, not the outbox,
// is what keeps a milestone read again after a restart from being
// announced twice.

// The events a notice with a destination reports (Notice.Event).
const (
	NoticeFlowStatus   = "flow.status"
	NoticeFlowFinished = "flow.finished"
	NoticeMilestone    = "task.milestone"
)

// Bounds on notify settings: they live in flow and task records, and
// each notice carries the template.
const (
	// MaxNotifyTo bounds a run's destinations.
	MaxNotifyTo = 16
	// MaxNotifyTemplate bounds a message template, in bytes.
	MaxNotifyTemplate = 16 << 10
	maxDestBytes      = 2 << 10
	maxNotifyNames    = 32
	maxNotifyName     = 128
)

// checkNotifySettings checks a run's notify policy (empty: the default),
// destinations and template. Destinations are checked for shape only:
// what a name or URL means is the gateway's notify config's business,
// which the CLI and API check before the engine sees them.
func checkNotifySettings(policy string, to []string, template string) error {
	if policy != "" && !slices.Contains(sdk.NotifyPolicies(), policy) {
		return invalid("unknown notify policy %q (want one of %v)", policy, sdk.NotifyPolicies())
	}
	if len(to) > MaxNotifyTo {
		return invalid("%d notify destinations given; at most %d are allowed (name a group of receivers once in the gateway's notify config)", len(to), MaxNotifyTo)
	}
	for i, d := range to {
		if strings.TrimSpace(d) == "" || strings.ContainsAny(d, "\x00\n\r") {
			return invalid("notify destination %d is empty or holds a NUL or line break; give a name from the gateway's notify config, a URL or cmd:COMMAND", i+1)
		}
		if len(d) > maxDestBytes {
			return invalid("notify destination %d is %d bytes long; at most %d are allowed", i+1, len(d), maxDestBytes)
		}
	}
	if len(template) > MaxNotifyTemplate {
		return invalid("the notify template is %d bytes; at most %d are allowed", len(template), MaxNotifyTemplate)
	}
	return nil
}

// checkMilestoneNames checks the milestone names a task's notices are
// asked for.
func checkMilestoneNames(names []string) error {
	if len(names) > maxNotifyNames {
		return invalid("%d milestones to notify on; at most %d are allowed", len(names), maxNotifyNames)
	}
	for _, n := range names {
		if n == "" || n != strings.TrimSpace(n) || len(n) > maxNotifyName {
			return invalid("milestone name %q to notify on must be non-empty, without surrounding space, and at most %d bytes", n, maxNotifyName)
		}
	}
	return nil
}

// checkTaskNotify checks a new task's notify settings against the flow
// it joins: nil for a detached run, whose mirrored flow takes them.
func checkTaskNotify(s sdk.TaskSpec, flow *sdk.Flow) error {
	if flow != nil && (s.NotifyPolicy != "" || len(s.NotifyTo) > 0 || s.NotifyTemplate != "") {
		return invalid("a task in flow %s is told about through its flow's notify settings; set them when the flow is created", flow.ID)
	}
	to := s.NotifyTo
	if flow != nil {
		to = flow.NotifyTo
	}
	if len(s.NotifyOnMilestone) > 0 && len(to) == 0 {
		return invalid("notify on milestones %v has nowhere to go: give a destination with --notify-to", s.NotifyOnMilestone)
	}
	return nil
}

// noticeStatusOf is the status a flow's notice reports: its own, or
// sdk.NoticeAborted for a cancel.
func noticeStatusOf(f *sdk.Flow) string {
	if f.Status == sdk.FlowCancelled {
		return sdk.NoticeAborted
	}
	return string(f.Status)
}

// policyEvent is the event f's notify policy reports for the change of
// status f records, or "" when it reports none.
func policyEvent(f *sdk.Flow) string {
	switch {
	case len(f.NotifyTo) == 0 || f.NotifyPolicy == sdk.NotifySilent:
		return ""
	case f.Status.Terminal():
		return NoticeFlowFinished
	case f.NotifyPolicy == sdk.NotifyStateChanges:
		return NoticeFlowStatus
	}
	return ""
}

// queuePolicyNotices queues one notice of event (see policyEvent; ""
// queues none) to each of f's destinations, carrying f's record rec and
// the status it left, old's.
func (t *txn) queuePolicyNotices(old, f *sdk.Flow, event string, rec json.RawMessage) error {
	if event == "" {
		return nil
	}
	status := noticeStatusOf(f)
	for i, d := range f.NotifyTo {
		n := Notice{FlowID: f.ID, Dest: d, Event: event, PreviousStatus: string(old.Status), Template: f.NotifyTemplate, Flow: rec}
		if err := t.putNotice(fmt.Sprintf("%s/%s/r%d/%d", f.ID, status, f.Revision, i), status, n); err != nil {
			return err
		}
	}
	return nil
}

// queueMilestoneNotices queues the notices of milestone m of task,
// reported in this write, when its spec asks for them and none was
// queued for that name before; it records the name on task.
func (t *txn) queueMilestoneNotices(f *sdk.Flow, task *stored.Task, m sdk.Milestone) error {
	if !slices.Contains(task.Spec.NotifyOnMilestone, m.Name) || slices.Contains(task.MilestonesNoticed, m.Name) {
		return nil
	}
	task.MilestonesNoticed = append(slices.Clip(task.MilestonesNoticed), m.Name)
	b, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("encode the milestone notice of task %s: %w", task.ID, err)
	}
	rec := fitRecord(b, task.ID, task.Status, "tasks show")
	for i, d := range f.NotifyTo {
		n := Notice{TaskID: task.ID, Dest: d, Event: NoticeMilestone, Milestone: m.Name, Template: f.NotifyTemplate, Task: rec}
		if err := t.putNotice(fmt.Sprintf("%s/milestone/%s/%d", task.ID, m.Name, i), string(task.Status), n); err != nil {
			return err
		}
	}
	return nil
}
