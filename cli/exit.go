package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/sdk"
)

// Exit codes, the same for every command.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitConflict = 3
	// exitFindings: tasks audit --fail-on found a finding at or above
	// the given severity.
	exitFindings = 4
	// exitUnknown: the gateway stopped before it answered, so whether the
	// change the command asked for was made is unknown; the message says
	// how to find out. tasks run with --idempotency-key never ends so for
	// its submission: it asks again.
	exitUnknown = 5
	// exitBlocked: tasks run followed a task that ended blocked (it
	// reported {"blocked":…} and exited 0): a person must act, then
	// flowgate tasks flow retry runs it again. 75 is sysexits'
	// EX_TEMPFAIL, "try again later", which schedulers already treat as
	// not a plain failure.
	exitBlocked = 75
)

// usageError marks bad flags or arguments (exit 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// exitStatus ends a command with a given exit code; its message, if any,
// is printed like any error.
type exitStatus struct {
	code int
	msg  string
}

func (e exitStatus) Error() string { return e.msg }

// exitCode maps an error to the process exit code.
func exitCode(err error) int {
	var (
		u  usageError
		es exitStatus
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &es):
		return es.code
	case errors.Is(err, sdk.ErrRevisionConflict):
		return exitConflict
	case errors.Is(err, api.ErrNoAnswer):
		return exitUnknown
	case errors.As(err, &u), errors.Is(err, sdk.ErrInvalid):
		return exitUsage
	case strings.HasPrefix(err.Error(), "unknown command"):
		return exitUsage
	}
	return exitFailure
}

// args returns a cobra argument check that wants exactly n arguments and
// says which with what (e.g. "a task id").
func args(n int, what string) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) != n {
			return usageError{fmt.Errorf("%s needs %s (got %d arguments); see %s --help", cmd.CommandPath(), what, len(a), cmd.CommandPath())}
		}
		return nil
	}
}
