package shim

import (
	"syscall"
	"time"
)

// Reasons a Status gives for how the shim ended the child. The empty
// reason means the child ended on its own.
const (
	// ReasonTimeout: the child ran past Spec.Timeout.
	ReasonTimeout = "timeout"
	// ReasonBudgetExceeded: Spec.Deadline passed.
	ReasonBudgetExceeded = "budget-exceeded"
	// ReasonNoProgress: the progress file stopped growing for
	// Spec.NoProgress.
	ReasonNoProgress = "no-progress"
	// ReasonCancelled: the shim received SIGTERM or SIGINT.
	ReasonCancelled = "cancelled"
	// ReasonStartFailed: the child could not be started (or the spec
	// could not be read); Status.Error says why.
	ReasonStartFailed = "start-failed"
	// ReasonWithdrawn: the gateway withdrew the spec before the child
	// started; the command did not run, and the task may be queued again.
	ReasonWithdrawn = "withdrawn"
)

// Exit codes a Status carries when the child did not run to an exit of its
// own, following the shell's conventions. A child killed by signal N has
// exit code 128+N (SignalExit), as a shell reports it: 137 for SIGKILL.
const (
	// ExitNotRun is the exit code of a child that never started because
	// its deadline had passed or it was cancelled first.
	ExitNotRun = -1
	// ExitCannotRun is the exit code of a start failure other than a
	// missing command: a file that is not executable, a missing cwd or
	// stdin file, an unreadable or invalid spec.
	ExitCannotRun = 126
	// ExitNotFound is the exit code when the command does not exist.
	ExitNotFound = 127
)

// SignalExit is the exit code of a child killed by sig: 128 plus its
// number, as shells report it.
func SignalExit(sig syscall.Signal) int { return 128 + int(sig) }

// Status is how an attempt ended: Record.Status (the content of
// status.json of older shims). The shim writes it once, durably, after
// the child and every process left in its group are gone.
type Status struct {
	// ExitCode is the child's exit code, SignalExit of the signal that
	// killed it, ExitCannotRun / ExitNotFound when it could not start, or
	// ExitNotRun when it was never started.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that killed the child ("SIGKILL"); empty
	// when the child exited.
	Signal string `json:"signal,omitempty"`
	// Reason is one of the Reason constants; empty when the child ended
	// on its own.
	Reason string `json:"reason,omitempty"`
	// Error says in words what went wrong at the shim's level (a start
	// failure, which limit was hit); empty for a child that simply
	// exited, whatever its code.
	Error string `json:"error,omitempty"`
	// StartedAt is when the child started (or the start was attempted);
	// EndedAt when the shim saw it end.
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
}

// GiveUpFile is written, once, in the attempt directory when the shim
// gives up waiting for a child it leaves running (Spec.KeepOnNoProgress):
// a GiveUp, which the gateway records as the task's interruption.
const GiveUpFile = "giveup.json"

// GiveUp is the content of GiveUpFile.
type GiveUp struct {
	// Reason is ReasonNoProgress.
	Reason string    `json:"reason"`
	Detail string    `json:"detail"`
	At     time.Time `json:"at"`
}

// ReadGiveUp reads the give-up file at path; a missing file gives an
// error that matches fs.ErrNotExist.
func ReadGiveUp(path string) (GiveUp, error) {
	var g GiveUp
	err := readJSON(path, &g)
	return g, err
}
