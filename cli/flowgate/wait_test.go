package main_test

import (
	"testing"
	"time"
)

// waitFor calls check every poll until it reports done, and fails the
// test after limit with the last reason check gave. check may fail the
// test itself (a command that errs).
func waitFor(t testing.TB, limit, poll time.Duration, check func() (done bool, why string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		done, why := check()
		if done {
			return
		}
		if !time.Now().Before(deadline) {
			t.Fatalf("timed out after %s: %s", limit, why)
		}
		time.Sleep(poll) // a bounded poll of a condition
	}
}

// waitUntil is waitFor for a condition that has no reason of its own to
// give: it polls cond every 50 ms and, after timeout, says what it
// waited for.
func waitUntil(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	waitFor(t, timeout, 50*time.Millisecond, func() (bool, string) { return cond(), "waiting for " + what })
}
