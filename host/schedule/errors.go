package schedule

import (
	"errors"

	"github.com/flowgate/flowgate/sdk"
)

// ErrInvalidSchedule is matched by every validation error this package
// returns; test for it with errors.Is and read the *FlagError for details.
var ErrInvalidSchedule = errors.New("invalid schedule")

// ErrTooManyTimes is returned by Schedule.Between when a range holds more
// than MaxTimes scheduled times. Narrow the range or coarsen the schedule.
var ErrTooManyTimes = errors.New("too many scheduled times in range")

// FlagError is a validation error that names the CLI flag at fault and the
// rule it broke, so a command can print it unchanged.
type FlagError struct {
	// Flag is the flag at fault, with its dashes: "--cron", "--tz",
	// "--every", "--at", "--dst" or "--overlap" here, and any job flag
	// ("--name", "--webhook", …) from host/scheduler, which reports its
	// own validation errors the same way. It is empty when the rule is
	// about a choice between flags, which the rule names itself.
	Flag string
	// Rule says what is wrong and what is accepted instead.
	Rule string
}

// Error returns "<flag>: <rule>", or the rule alone when no one flag is
// at fault.
func (e *FlagError) Error() string {
	if e.Flag == "" {
		return e.Rule
	}
	return e.Flag + ": " + e.Rule
}

// Is reports whether target is ErrInvalidSchedule or sdk.ErrInvalid.
func (e *FlagError) Is(target error) bool {
	return target == ErrInvalidSchedule || target == sdk.ErrInvalid
}

func flagErr(flag, rule string) error { return &FlagError{Flag: flag, Rule: rule} }
