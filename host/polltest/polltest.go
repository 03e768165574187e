// Package polltest is the one bounded wait that tests use: poll a
// condition until it holds, and fail the test naming what it waited for
// when it does not within a limit. Tests wait on conditions, never on
// sleeps, so a slow machine makes a test slower, not wrong.
package polltest

import (
	"strings"
	"testing"
	"time"
)

// Default limit and interval: long enough for a loaded 2-core machine,
// short enough that a hung test says so well before the go test timeout.
const (
	DefaultLimit = 30 * time.Second
	DefaultEvery = 20 * time.Millisecond
)

// Cond is what Until polls: a plain condition, or a check that also says
// why it is not done yet, so that a timeout reports the last reason.
type Cond interface {
	func() bool | func() (bool, string)
}

// Option changes how Until waits or what it says when it gives up.
type Option func(*config)

type config struct {
	limit, every time.Duration
	explain      []func() string
}

// Within sets how long Until waits before failing the test.
func Within(limit time.Duration) Option { return func(c *config) { c.limit = limit } }

// Every sets how often Until polls; a costly check (running the binary)
// polls less often so that it does not take the machine from what it
// waits for.
func Every(every time.Duration) Option { return func(c *config) { c.every = every } }

// Explain adds what explain says at the time of a timeout to the failure
// message, such as the state of the records the condition looked at.
func Explain(explain func() string) Option {
	return func(c *config) { c.explain = append(c.explain, explain) }
}

// Until polls cond until it holds. When it does not within the limit, it
// fails t with what it waited for, cond's last reason if it gives one,
// and what every Explain says. cond may fail the test itself.
func Until[C Cond](t testing.TB, what string, cond C, opts ...Option) {
	t.Helper()
	c := config{limit: DefaultLimit, every: DefaultEvery}
	for _, o := range opts {
		o(&c)
	}
	check := func() (bool, string) { return false, "" }
	switch f := any(cond).(type) {
	case func() bool:
		check = func() (bool, string) { return f(), "" }
	case func() (bool, string):
		check = f
	}
	deadline := time.Now().Add(c.limit)
	for {
		done, why := check()
		if done {
			return
		}
		if !time.Now().Before(deadline) {
			msg := "timed out after " + c.limit.String()
			if what != "" {
				msg += " waiting for " + what
			}
			more := []string{msg}
			if why != "" {
				more = append(more, why)
			}
			for _, e := range c.explain {
				more = append(more, e())
			}
			t.Fatal(strings.Join(more, "\n"))
		}
		time.Sleep(c.every) // a bounded poll of a condition
	}
}
