package polltest_test

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/polltest"
)

// recorder is a testing.TB that keeps the failure instead of failing the
// test, so the failure message itself can be checked; Fatal ends the
// goroutine as testing's does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatal(args ...any) {
	r.failed = args[0].(string)
	runtime.Goexit()
}

// run calls wait on a goroutine of its own, so that a Fatal ends only it.
func run(wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait()
	}()
	<-done
}

// TestUntilReturnsOnceTheConditionHolds: a condition that comes true
// after a few polls ends the wait without failing.
func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var polls atomic.Int64
	r := &recorder{TB: t}
	run(func() {
		polltest.Until(r, "the third poll", func() bool { return polls.Add(1) >= 3 }, polltest.Every(time.Millisecond))
	})
	if r.failed != "" || polls.Load() != 3 {
		t.Fatalf("failed %q after %d polls", r.failed, polls.Load())
	}
}

// TestUntilNamesWhatItWaitedForWhyAndTheExplanation: on a timeout the
// message names the wait, the check's last reason and every Explain.
func TestUntilNamesWhatItWaitedForWhyAndTheExplanation(t *testing.T) {
	r := &recorder{TB: t}
	run(func() {
		polltest.Until(r, "the flow to succeed", func() (bool, string) { return false, "status running" },
			polltest.Within(10*time.Millisecond), polltest.Every(time.Millisecond),
			polltest.Explain(func() string { return "task t1 attempts 2" }))
	})
	for _, want := range []string{"timed out after 10ms waiting for the flow to succeed", "status running", "task t1 attempts 2"} {
		if !strings.Contains(r.failed, want) {
			t.Errorf("failure %q does not say %q", r.failed, want)
		}
	}
}
