package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// A task record must always fit in one store value (store.MaxValueSize),
// and above all the write that records the task's end: a task whose end
// cannot be recorded stays running for good. So every part of a record
// is bounded where it enters:
//
//   - the spec, which the caller gives, is refused at creation when it
//     encodes to more than MaxSpecBytes;
//   - milestones keep the first keepFirstMilestones and the latest, at
//     most maxMilestones in all, each encoding to at most
//     maxMilestoneBytes (its data goes first, then its message is cut);
//     MilestonesDropped counts what was dropped;
//   - the progress snapshot encodes to at most maxProgressBytes;
//   - errors (one an attempt) keep the first keepFirstErrors and the
//     latest, at most maxErrors, each cut to maxErrorBytes;
//   - a running task's record is checked against runningBudget, which
//     leaves endReserve for its end;
//   - the end itself never fails for size: fitTask sheds the inline
//     stdout and JSON result first (the task's log file keeps them, and
//     Result.StdoutBytes and the digest stay), then progress data, then
//     all but a few milestones, until the record fits.
const (
	// MaxSpecBytes bounds a task's spec as stored (JSON): its command,
	// environment and inline input together.
	MaxSpecBytes        = 640 << 10
	maxMilestones       = 64
	keepFirstMilestones = 8
	maxMilestoneBytes   = 2 << 10
	maxProgressBytes    = 32 << 10
	maxErrors           = 32
	keepFirstErrors     = 4
	maxErrorBytes       = 1 << 10
	endReserve          = 128 << 10
	runningBudget       = store.MaxValueSize - endReserve
	// NearSizeLimit is the record size the audit reports as close to the
	// store's limit.
	NearSizeLimit = store.MaxValueSize * 3 / 4
)

// encodedSize is the size of v as the engine stores it.
func encodedSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// checkSpecSize refuses a spec that would leave no room in the record for
// what the task reports.
func checkSpecSize(spec sdk.TaskSpec) error {
	if n := encodedSize(spec); n > MaxSpecBytes {
		return invalid("the task's spec (command, env and input) is %d bytes stored; at most %d fit in a task record (pass large input as a file with stdin)", n, MaxSpecBytes)
	}
	return nil
}

// boundTask applies the per-part bounds to task in place.
func boundTask(task *stored.Task) {
	if n := len(task.Milestones) - maxMilestones; n > 0 {
		task.Milestones = append(task.Milestones[:keepFirstMilestones:keepFirstMilestones], task.Milestones[keepFirstMilestones+n:]...)
		task.MilestonesDropped += int64(n)
	} else {
		task.Milestones = slices.Clone(task.Milestones)
	}
	for i := range task.Milestones {
		shrinkMilestone(&task.Milestones[i])
	}
	if task.Progress != nil && encodedSize(task.Progress) > maxProgressBytes {
		p := *task.Progress
		p.Data = nil
		for encodedSize(&p) > maxProgressBytes {
			p.Message, p.Phase = halve(p.Message), halve(p.Phase)
		}
		task.Progress = &p
	}
	for i, e := range task.Errors {
		for encodedSize(e) > maxErrorBytes {
			e = halve(e)
		}
		task.Errors[i] = e
	}
	if n := len(task.Errors) - maxErrors; n > 0 {
		task.Errors = append(task.Errors[:keepFirstErrors:keepFirstErrors], task.Errors[keepFirstErrors+n:]...)
	}
}

// shrinkMilestone makes m encode in at most maxMilestoneBytes: its data
// is dropped first, then its message is cut, then its name.
func shrinkMilestone(m *sdk.Milestone) {
	if encodedSize(m) <= maxMilestoneBytes {
		return
	}
	if len(m.Data) > 0 {
		m.Data = nil
		m.Message += " (data dropped: too large for the task record)"
	}
	for encodedSize(m) > maxMilestoneBytes && m.Message != "" {
		m.Message = halve(m.Message)
	}
	for encodedSize(m) > maxMilestoneBytes {
		m.Name = halve(m.Name)
	}
}

// halve cuts s to about half its length, on a rune boundary, marking the
// cut with "…".
func halve(s string) string {
	if len(s) <= 8 {
		return s[:len(s)/2]
	}
	cut := len(s) / 2
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSuffix(s[:cut], "…") + "…"
}

// fitTask bounds task and makes it fit budget: runningBudget for a task
// that has not ended, store.MaxValueSize for one that has. What it sheds,
// in order: the inline stdout and JSON result, the progress snapshot's
// data and text, all milestones but the first and last two, and, for an
// end, all errors but the first and last, then the spec's input and env.
// Only a record whose spec alone is over the store's limit is refused.
// It returns the record's encoding.
func fitTask(task *stored.Task) ([]byte, error) {
	boundTask(task)
	budget := runningBudget
	if task.Status.Terminal() {
		budget = store.MaxValueSize
	}
	shed := []func(){
		func() {
			if task.Result != nil {
				r := *task.Result
				r.Stdout, r.JSON = "", nil
				task.Result = &r
			}
		},
		func() {
			if task.Progress != nil {
				task.Progress = &sdk.Progress{Fraction: task.Progress.Fraction, At: task.Progress.At}
			}
		},
		func() {
			if n := len(task.Milestones) - 4; n > 0 {
				task.Milestones = append(task.Milestones[:2:2], task.Milestones[2+n:]...)
				task.MilestonesDropped += int64(n)
			}
		},
		func() {
			if task.Status.Terminal() && len(task.Errors) > 2 {
				task.Errors = append(task.Errors[:1:1], task.Errors[len(task.Errors)-1])
			}
		},
		func() {
			if task.Status.Terminal() {
				task.Spec.Input = ""
				task.Spec.Env = nil
			}
		},
	}
	for _, s := range shed {
		b, err := json.Marshal(task)
		if err != nil || len(b) <= budget {
			return b, err
		}
		s()
	}
	// Over budget still: a spec from a version that did not bound it.
	// While it fits the store the write goes ahead (its end will shed the
	// spec's input and env); past that it is refused.
	b, err := json.Marshal(task)
	if err == nil && len(b) > store.MaxValueSize {
		err = fmt.Errorf("%w: task %s would be %d bytes, over the store's %d per record; its spec is too large (see flowgate tasks show %s)", store.ErrValueTooLarge, task.ID, len(b), store.MaxValueSize, task.ID)
	}
	return b, err
}
