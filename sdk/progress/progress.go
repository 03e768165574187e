// Package progress lets a task written in Go report progress and
// milestones to flowgate.
//
// A task run by flowgate finds the path of its progress file in
// $FLOWGATE_PROGRESS; every report appends one JSON line to it. Progress is
// coalesced (the latest snapshot wins); a milestone is stored durably, once,
// with a per-task sequence number, and wakes a managed flow's controller.
// The task's record keeps its first 8 milestones and its latest ones, 64 in
// all, each at most 2 KiB stored (larger data is dropped, a long message
// cut); the count of those dropped is in the task's milestones_dropped, and
// a controller still gets an event for every one. A line over 64 KiB is
// skipped as malformed.
//
// A task that calls paid APIs reports what each call used with
// ReportUsage; flowgate adds the reports up on the task, its flow and its
// chain, and checks the chain's budget against them. Usage that is never
// reported is never counted, not even as zero.
// Outside flowgate (the variable is unset) every call does nothing, so the
// same program runs anywhere.
//
//	progress.Report(0.25, "fetching", "1/4 sources")
//	progress.Milestone("sources-gathered", "4 sources")
//
// A task that ran but needs a person before its work can go on (a login
// expired, a file is missing) says so with Blocked and exits 0: it ends
// blocked, and flowgate tasks flow retry runs it again.
//
//	progress.Blocked("the API token expired; renew it, then retry")
package progress

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
)

// EnvVar names the variable that holds the progress file's path.
const EnvVar = "FLOWGATE_PROGRESS"

// Line is one progress report. Milestone, when set, makes it a milestone.
type Line struct {
	Fraction  *float64 `json:"fraction,omitempty"`
	Phase     string   `json:"phase,omitempty"`
	Message   string   `json:"message,omitempty"`
	Data      any      `json:"data,omitempty"`
	Milestone string   `json:"milestone,omitempty"`
	// Blocked, when set, says the task needs a person, and why: a task
	// that then exits 0 ends blocked instead of succeeded.
	Blocked string `json:"blocked,omitempty"`
	// Usage, when set, reports the usage of the calls made since the
	// last report; it is added to what the task reported before.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is what calls used. A nil field is not reported (unknown), which
// is not the same as zero.
type Usage struct {
	InputTokens  *int64   `json:"input_tokens,omitempty"`
	OutputTokens *int64   `json:"output_tokens,omitempty"`
	Cost         *float64 `json:"cost,omitempty"`
}

// Reporter appends lines to one progress file. The zero value reports
// nothing. It is safe for concurrent use.
type Reporter struct {
	mu   sync.Mutex
	path string
}

// New returns a reporter for the file at path; an empty path reports
// nothing.
func New(path string) *Reporter { return &Reporter{path: path} }

// FromEnv returns a reporter for $FLOWGATE_PROGRESS.
func FromEnv() *Reporter { return New(os.Getenv(EnvVar)) }

// Send appends l as one line. It returns the write error, if any; a task
// may ignore it, since progress is advisory. A fraction outside [0,1] (or
// NaN) is refused with an error and nothing is written: flowgate would
// skip the line as malformed.
func (r *Reporter) Send(l Line) error {
	if r == nil || r.path == "" {
		return nil
	}
	if f := l.Fraction; f != nil && !(*f >= 0 && *f <= 1) {
		return fmt.Errorf("progress: fraction %v is outside [0,1]; report done/total", *f)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	// One write call per line: O_APPEND keeps lines from concurrent
	// writers whole.
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Report sends a progress snapshot: fraction done in [0,1], the phase, and
// a message for people.
func (r *Reporter) Report(fraction float64, phase, message string) error {
	return r.Send(Line{Fraction: &fraction, Phase: phase, Message: message})
}

// Milestone sends a durable milestone named name.
func (r *Reporter) Milestone(name, message string) error {
	return r.Send(Line{Milestone: name, Message: message})
}

// Blocked says the task needs a person before its work can go on, and
// why. The task should exit 0 after it: it then ends blocked, not
// succeeded, its flow shows reason as its blocked summary, and flowgate
// tasks flow retry runs it again once the person has acted. A task that
// exits non-zero after Blocked fails as it would without it. An empty
// reason is refused with an error and nothing is written.
func (r *Reporter) Blocked(reason string) error {
	if strings.TrimSpace(reason) == "" {
		return fmt.Errorf("progress: a blocked report needs a reason a person can act on")
	}
	return r.Send(Line{Blocked: reason})
}

// ReportUsage sends the tokens and cost the calls since the last report
// used. Negative values are refused with an error and nothing is written.
func (r *Reporter) ReportUsage(inputTokens, outputTokens int64, cost float64) error {
	if inputTokens < 0 || outputTokens < 0 || !(cost >= 0) {
		return fmt.Errorf("progress: usage must not be negative (tokens %d/%d, cost %v)", inputTokens, outputTokens, cost)
	}
	return r.Send(Line{Usage: &Usage{InputTokens: &inputTokens, OutputTokens: &outputTokens, Cost: &cost}})
}

// ReportUsage sends usage through $FLOWGATE_PROGRESS.
func ReportUsage(inputTokens, outputTokens int64, cost float64) error {
	return FromEnv().ReportUsage(inputTokens, outputTokens, cost)
}

// Report sends a progress snapshot through $FLOWGATE_PROGRESS.
func Report(fraction float64, phase, message string) error {
	return FromEnv().Report(fraction, phase, message)
}

// Milestone sends a durable milestone through $FLOWGATE_PROGRESS.
func Milestone(name, message string) error { return FromEnv().Milestone(name, message) }

// Blocked says, through $FLOWGATE_PROGRESS, that the task needs a person.
func Blocked(reason string) error { return FromEnv().Blocked(reason) }
