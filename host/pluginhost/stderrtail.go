package pluginhost

import (
	"bytes"
	"sync"
)

// StderrLines is how many of its last stderr lines a plugin's failed
// start shows (StartError).
const StderrLines = 20

// maxStderrLine bounds one kept line, so that a plugin writing megabytes
// without a newline cannot make the gateway hold them.
const maxStderrLine = 1024

// stderrTail is the io.Writer go-plugin copies a plugin process's own
// stderr to: it keeps the last StderrLines lines, each clipped to
// maxStderrLine bytes. A Python or Node plugin that dies on an import
// says why there, before any handshake, and go-plugin logs such lines
// at debug level only.
type stderrTail struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
}

// Write implements io.Writer.
func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			t.add(rest)
			break
		}
		t.add(rest[:i])
		t.lines = append(t.lines, string(t.partial))
		if len(t.lines) > StderrLines {
			t.lines = t.lines[len(t.lines)-StderrLines:]
		}
		t.partial = t.partial[:0]
		rest = rest[i+1:]
	}
	return len(p), nil
}

// add appends b to the line being written, up to maxStderrLine bytes.
func (t *stderrTail) add(b []byte) {
	t.partial = append(t.partial, b[:min(len(b), maxStderrLine-len(t.partial))]...)
}

// Lines returns the kept lines, oldest first, with an unfinished last
// line.
func (t *stderrTail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.lines...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
	}
	return out[max(0, len(out)-StderrLines):]
}
