package throttle

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DefaultEvery is how often a Log lets a repeated message through.
const DefaultEvery = 30 * time.Second

// Log passes a message to Logger at most once per Every, keyed by level
// and message text (put what varies in the arguments, not the text): the
// first occurrence goes through, the repeats are counted, and the first
// repeat after Every goes through saying how many were held back. The zero
// value is not usable; set Logger. It is safe for concurrent use.
type Log struct {
	// Logger receives the lines that go through.
	Logger hclog.Logger
	// Every is the least time between two lines of one message; if zero,
	// DefaultEvery.
	Every time.Duration
	// Now is the clock; if nil, time.Now.
	Now func() time.Time

	mu   sync.Mutex
	seen map[string]*window
}

// window is one message's current interval.
type window struct {
	start time.Time
	held  int // repeats not logged since start
}

// Error logs msg at error level, throttled.
func (l *Log) Error(msg string, args ...any) { l.log(hclog.Error, msg, args) }

// Warn logs msg at warning level, throttled.
func (l *Log) Warn(msg string, args ...any) { l.log(hclog.Warn, msg, args) }

func (l *Log) log(level hclog.Level, msg string, args []any) {
	if line, ok := l.pass(level, msg); ok {
		l.Logger.Log(level, line, args...)
	}
}

// pass counts one occurrence of msg and returns the line to log, if any.
func (l *Log) pass(level hclog.Level, msg string) (string, bool) {
	every := l.Every
	if every <= 0 {
		every = DefaultEvery
	}
	now := time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	key := level.String() + "\x00" + msg
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string]*window{}
	}
	w := l.seen[key]
	switch {
	case w == nil:
		l.seen[key] = &window{start: now}
		return msg, true
	case now.Sub(w.start) < every:
		w.held++
		return "", false
	}
	held, since := w.held, now.Sub(w.start)
	w.start, w.held = now, 0
	if held == 0 {
		return msg, true
	}
	return fmt.Sprintf("%s (repeated %d times in the last %s)", msg, held, since.Round(time.Second)), true
}
