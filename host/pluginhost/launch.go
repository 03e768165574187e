package pluginhost

import (
	"fmt"
	"os/exec"
	"strings"

	plugin "github.com/hashicorp/go-plugin"
)

// Launch is one start of a plugin process under go-plugin that keeps the
// last lines the process writes to stderr, so that a failed start can say
// what the plugin said (a missing module, an unbuilt script, a file not
// found) instead of go-plugin's guesses about the architecture.
type Launch struct {
	*plugin.Client
	cmd  *exec.Cmd
	tail *stderrTail
}

// NewLaunch makes the go-plugin client of cfg (see ClientConfig), whose
// Cmd is the plugin's process, copying the process's stderr to a tail.
func NewLaunch(cfg *plugin.ClientConfig) *Launch {
	l := &Launch{cmd: cfg.Cmd, tail: &stderrTail{}}
	cfg.Stderr = l.tail
	l.Client = plugin.NewClient(cfg)
	return l
}

// Start starts the process and makes the go-plugin handshake (the
// client's Client). On failure it kills the process, waits for it to
// end, and returns a *StartError with how it ended and what it wrote to
// stderr, wrapping go-plugin's error.
func (l *Launch) Start() (plugin.ClientProtocol, *StartError) {
	rpc, err := l.Client.Client()
	if err == nil {
		return rpc, nil
	}
	l.Kill() // returns once go-plugin has waited for the process
	se := &StartError{Path: l.cmd.Path, Stderr: l.tail.Lines(), Err: err}
	if ps := l.cmd.ProcessState; ps != nil {
		se.Exit, se.Exited = ps.String(), ps.Exited()
	}
	return nil, se
}

// StartError is a plugin process that did not make its go-plugin
// handshake.
type StartError struct {
	// Path is the plugin's executable.
	Path string
	// Exit is how the process ended ("exit status 3", "signal: killed"),
	// empty when it never ran; Exited is true when it ended by itself
	// rather than by a signal (go-plugin kills it after a failed
	// handshake).
	Exit   string
	Exited bool
	// Stderr is the last lines (at most StderrLines) it wrote to stderr.
	Stderr []string
	// Err is go-plugin's error.
	Err error
}

// Summary says in one line why the plugin did not start, without its
// path.
func (e *StartError) Summary() string {
	if e.Exited {
		return fmt.Sprintf("it exited before the handshake (%s)", e.Exit)
	}
	// go-plugin's first line is what it saw (a stray stdout line, a
	// timeout); the lines after it guess at causes.
	first, _, _ := strings.Cut(e.Err.Error(), "\n")
	if e.Exit != "" {
		return fmt.Sprintf("%s (then %s)", first, e.Exit)
	}
	return first
}

// Error is the path, the summary and the lines of stderr, each on an
// indented line of its own.
func (e *StartError) Error() string {
	if len(e.Stderr) == 0 {
		return fmt.Sprintf("%s: %s; it wrote nothing to stderr", e.Path, e.Summary())
	}
	return fmt.Sprintf("%s: %s; the last %d line(s) of its stderr:\n  %s", e.Path, e.Summary(), len(e.Stderr), strings.Join(e.Stderr, "\n  "))
}

// Unwrap returns go-plugin's error.
func (e *StartError) Unwrap() error { return e.Err }
