package schedule

import (
	"fmt"
	"time"
)

// backoffSteps is the delay before the next run of a recurring job after
// 1, 2, 3, 4 and 5-or-more consecutive failures.
var backoffSteps = [...]time.Duration{30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour}

// DisableAfter is how many consecutive failures auto-disable a job.
const DisableAfter = 10

// Failure-alert defaults, for callers whose job sets none.
const (
	// DefaultAlertAfter is how many consecutive failures raise an alert.
	DefaultAlertAfter = 2
	// DefaultAlertCooldown is the least time between two alerts for a job.
	DefaultAlertCooldown = time.Hour
)

// FailureBackoff returns how long a recurring job waits after consecutive
// failures before it may run again: 30s, 1m, 5m, 15m, then 60m for every
// further failure. Zero or fewer failures means no wait.
func FailureBackoff(consecutive int) time.Duration {
	if consecutive <= 0 {
		return 0
	}
	return backoffSteps[min(consecutive, len(backoffSteps))-1]
}

// ShouldDisable reports whether a job has failed often enough in a row
// (DisableAfter) to be disabled, and if so a reason to show the user.
func ShouldDisable(consecutive int) (bool, string) {
	if consecutive < DisableAfter {
		return false, ""
	}
	return true, fmt.Sprintf("disabled after %d consecutive failures; fix the cause, then enable the job again", consecutive)
}

// AlertDue reports whether a failure alert should go out now: the job has
// failed at least after times in a row (after below 1 counts as 1) and no
// alert went out within cooldown of now (lastAlert zero means none has).
// A zero cooldown allows an alert on every failure past the threshold.
func AlertDue(consecutive, after int, lastAlert, now time.Time, cooldown time.Duration) bool {
	if consecutive < max(after, 1) {
		return false
	}
	return lastAlert.IsZero() || now.Sub(lastAlert) >= cooldown
}
