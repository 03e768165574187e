package dest

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Notice is what a destination is told: the JSON an http(s) destination
// is POSTed and a cmd: destination reads on stdin, and the data a
// template sees (as {{.Status}}, {{.Goal}}, …). docs/notifications.md
// documents every field; a field that does not apply is left out of the
// JSON and is the zero value in a template.
type Notice struct {
	// Key names the message; every attempt to send it carries the same
	// key (Idempotency-Key, FLOWGATE_NOTICE_KEY), so a receiver dedupes.
	Key string `json:"key"`
	// Event is what happened: flow.status, flow.finished,
	// task.milestone, or a cron job's event.
	Event string `json:"event"`
	// Status is the flow's or task's status now; PreviousStatus the one
	// it left, for a status change.
	Status         string `json:"status"`
	PreviousStatus string `json:"previous_status,omitempty"`
	FlowID         string `json:"flow_id,omitempty"`
	TaskID         string `json:"task_id,omitempty"`
	Goal           string `json:"goal,omitempty"`
	// Controller names the controller driving the flow; Job the cron
	// job that ran it.
	Controller string `json:"controller,omitempty"`
	Job        string `json:"job,omitempty"`
	// Milestone names the milestone a task.milestone notice reports.
	Milestone string    `json:"milestone,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// Duration is EndedAt-StartedAt (or until now for a running one),
	// rounded to the second, written like 1m30s.
	Duration string `json:"duration,omitempty"`
	// ExitCode is the task's exit code, when it exited.
	ExitCode *int `json:"exit_code,omitempty"`
	// Error says why the run failed, when it says.
	Error string `json:"error,omitempty"`
	// StderrTail is the last lines of the task's stderr, for a failure:
	// at most MaxStderrLines lines and MaxStderrBytes bytes.
	StderrTail []string `json:"stderr_tail,omitempty"`
	// Output is the run's result or output, at most MaxOutputBytes of
	// it (a longer one is cut and marked with Truncated).
	Output string `json:"output,omitempty"`
	// Truncated says Output was cut.
	Truncated bool `json:"truncated,omitempty"`
	// URL is the run center's page of the flow, when the gateway config
	// sets http.public_url.
	URL string `json:"url,omitempty"`
}

// Bounds on what a notice carries, so a message fits a chat and a store
// value.
const (
	MaxStderrLines = 10
	MaxStderrBytes = 2 << 10
	MaxOutputBytes = 4 << 10
)

// Tail returns the last MaxStderrLines non-empty lines of b, at most
// MaxStderrBytes of them, for Notice.StderrTail.
func Tail(b []byte) []string {
	b = b[max(0, len(b)-MaxStderrBytes):]
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	var lines []string
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimRight(l, "\r \t"); l != "" {
			lines = append(lines, l)
		}
	}
	return lines[max(0, len(lines)-MaxStderrLines):]
}

// SetOutput sets n.Output to out, a JSON value or text, cut to
// MaxOutputBytes (Truncated says so). A JSON string is set as its text.
func (n *Notice) SetOutput(out []byte) {
	var s string
	if json.Unmarshal(out, &s) != nil {
		s = string(out)
	}
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	if len(s) > MaxOutputBytes {
		cut := MaxOutputBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s, n.Truncated = s[:cut], true
	}
	n.Output = s
}

// SetTimes sets StartedAt, EndedAt and Duration; a zero end is a run
// still going, whose duration is until now.
func (n *Notice) SetTimes(started, ended, now time.Time) {
	n.StartedAt, n.EndedAt = started, ended
	if started.IsZero() {
		return
	}
	if ended.IsZero() {
		ended = now
	}
	n.Duration = ended.Sub(started).Round(time.Second).String()
}
