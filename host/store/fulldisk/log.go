package fulldisk

import (
	"bytes"
	"strings"
	"sync"
)

// Log is a log sink that may be read while it is written, for counting the
// lines a component logs on a full disk. The zero value is ready to use.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Lines returns how many lines were written.
func (l *Log) Lines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), "\n")
}

// String returns what was written.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
