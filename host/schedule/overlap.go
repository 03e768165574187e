package schedule

import "fmt"

// Overlap is what a job does when a run comes due while an earlier run of
// the same job is still active. The policies are Temporal's.
type Overlap string

// The overlap policies. The zero value means OverlapSkip.
const (
	// OverlapSkip drops the new run while one is active.
	OverlapSkip Overlap = "skip"
	// OverlapBufferOne queues one run to start when the active one ends;
	// further due runs while that one waits are dropped.
	OverlapBufferOne Overlap = "buffer_one"
	// OverlapBufferAll queues every due run, to start one after another.
	OverlapBufferAll Overlap = "buffer_all"
	// OverlapCancelOther cancels the active run and starts the new one once
	// the cancelled run has ended.
	OverlapCancelOther Overlap = "cancel_other"
	// OverlapAllowAll starts the new run alongside the active one.
	OverlapAllowAll Overlap = "allow_all"
)

// Action is what the scheduler does with a run that has come due.
type Action int

// The actions Decide returns.
const (
	// ActionStart starts the run now.
	ActionStart Action = iota + 1
	// ActionSkip drops the run; the scheduler records it as skipped.
	ActionSkip
	// ActionBuffer queues the run behind the active and buffered ones.
	ActionBuffer
	// ActionCancelThenStart cancels the active run and starts this one when
	// the cancellation has finished.
	ActionCancelThenStart
)

// String returns the action's lower-case name, for logs and run history.
func (a Action) String() string {
	switch a {
	case ActionStart:
		return "start"
	case ActionSkip:
		return "skip"
	case ActionBuffer:
		return "buffer"
	case ActionCancelThenStart:
		return "cancel_then_start"
	default:
		return fmt.Sprintf("Action(%d)", int(a))
	}
}

// ParseOverlap reads an --overlap value. Empty means OverlapSkip. An unknown
// value returns a *FlagError naming --overlap.
func ParseOverlap(v string) (Overlap, error) {
	switch p := Overlap(v); p {
	case "":
		return OverlapSkip, nil
	case OverlapSkip, OverlapBufferOne, OverlapBufferAll, OverlapCancelOther, OverlapAllowAll:
		return p, nil
	}
	return "", flagErr("--overlap", fmt.Sprintf("unknown policy %q; use skip, buffer_one, buffer_all, cancel_other or allow_all", v))
}

// Decide returns what to do with a run of a job that has come due. active
// says whether a run of the job is in progress; buffered is how many runs
// already wait behind it. A job with buffered runs but none active is
// treated as busy, so a new run never jumps the queue. An unknown policy
// behaves as OverlapSkip, the safe choice.
func Decide(p Overlap, active bool, buffered int) Action {
	busy := active || buffered > 0
	switch p {
	case OverlapAllowAll:
		return ActionStart
	case OverlapCancelOther:
		if active {
			return ActionCancelThenStart
		}
		return ActionStart
	case OverlapBufferAll:
		if busy {
			return ActionBuffer
		}
		return ActionStart
	case OverlapBufferOne:
		switch {
		case !busy:
			return ActionStart
		case buffered == 0:
			return ActionBuffer
		default:
			return ActionSkip
		}
	default:
		if busy {
			return ActionSkip
		}
		return ActionStart
	}
}
