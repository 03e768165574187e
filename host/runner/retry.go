package runner

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// exitTempFail is EX_TEMPFAIL from sysexits.h: "try again later".
const exitTempFail = 75

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
func shouldRetry(p *sdk.RetryPolicy, attempts int, class sdk.FailureClass) bool {
	return p != nil && (class == sdk.FailureTransient || class == sdk.FailureNeedsDiagnosis) && attempts < p.MaxAttempts
}
