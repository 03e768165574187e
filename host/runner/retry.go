package runner

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// Class is how a failed attempt is judged for retry.
type Class string

const (
	// Fatal failures are never retried: the command cannot succeed as
	// given (not found, not executable, cancelled, out of budget, or a
	// fatal stderr pattern).
	Fatal Class = "fatal"
	// Transient failures are worth another attempt (exit 75 EX_TEMPFAIL,
	// or a transient stderr pattern).
	Transient Class = "transient"
	// Unknown failures are retried while attempts remain.
	Unknown Class = "unknown"
)

// exitTempFail is EX_TEMPFAIL from sysexits.h: "try again later".
const exitTempFail = 75

// Classify judges a failed attempt. Fatal is checked first: exit codes 126
// and 127, a cancel or an exhausted budget, then the policy's fatal
// patterns; then transient: exit 75 or a transient pattern; else unknown.
// stderrTail is the end of the attempt's stderr. A pattern that does not
// compile is an error naming it.
func Classify(p *sdk.RetryPolicy, exitCode int, reason, stderrTail string) (Class, error) {
	switch {
	case exitCode == 126 || exitCode == 127:
		return Fatal, nil
	case reason == "cancelled" || reason == "budget-exceeded" || reason == "start-failed":
		return Fatal, nil
	}
	var fatal, transient []string
	if p != nil {
		fatal, transient = p.FatalPatterns, p.TransientPatterns
	}
	if ok, err := matchAny(fatal, stderrTail); err != nil || ok {
		return Fatal, err
	}
	if exitCode == exitTempFail {
		return Transient, nil
	}
	if ok, err := matchAny(transient, stderrTail); err != nil || ok {
		return Transient, err
	}
	return Unknown, nil
}

func matchAny(patterns []string, s string) (bool, error) {
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return false, fmt.Errorf("retry pattern %q: %w", p, err)
		}
		if re.MatchString(s) {
			return true, nil
		}
	}
	return false, nil
}

// Default backoff bounds when the policy leaves them zero.
const (
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = 5 * time.Minute
)

// Backoff is the delay before the attempt after attempt n (n ≥ 1):
// min(base·2^(n-1), max), then scaled by a jitter in [0.75, 1.25) drawn
// from u, a uniform number in [0, 1).
func Backoff(p *sdk.RetryPolicy, n int, u float64) time.Duration {
	base, ceiling := DefaultBackoff, DefaultMaxBackoff
	if p != nil && p.Backoff > 0 {
		base = time.Duration(p.Backoff)
	}
	if p != nil && p.MaxBackoff > 0 {
		ceiling = time.Duration(p.MaxBackoff)
	}
	d := float64(base) * math.Pow(2, float64(max(n, 1)-1))
	d = min(d, float64(ceiling))
	return time.Duration(d * (0.75 + 0.5*u))
}

// shouldRetry reports whether a failed attempt n of a task is tried again.
func shouldRetry(p *sdk.RetryPolicy, attempts int, class Class) bool {
	return p != nil && class != Fatal && attempts < p.MaxAttempts
}
