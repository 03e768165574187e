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
