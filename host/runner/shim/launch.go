package shim

import (
	"fmt"
	"os"
	"syscall"
)

// Launch starts exe with args as a detached process, the way the gateway
// starts "flowgate-shim D": in a new session (so it has no controlling
// terminal and no signal aimed at the gateway's group reaches it), with
// stdout and stderr on /dev/null, and without a parent-death signal, so
// it outlives the caller even a SIGKILLed one. exe is a path; it is not
// looked up in PATH. env is the whole environment of the new process;
// nil means the caller's. The new process keeps the caller's working
// directory.
//
// When env holds a SpecEnv entry (SpecEntry), Launch takes it out and
// writes the spec to the new process's stdin, a pipe, before it returns;
// otherwise stdin is /dev/null. A caller that dies while writing leaves
// the shim a spec cut short, on which it runs nothing.
//
// The caller should Wait on the returned process if it stays alive long
// enough to reap it; if the caller dies first, init (or the nearest
// subreaper) reaps it.
func Launch(exe string, args []string, env []string) (*os.Process, error) {
	env, spec := takeSpec(env)
	p, w, err := start(exe, args, env, spec != nil, nil)
	if err != nil {
		return nil, err
	}
	if w != nil {
		defer w.Close()
		// A shim that is gone before it read the spec ran nothing; the
		// gateway sees it exit without a record.
		_, _ = w.Write(frame(spec))
	}
	return p, nil
}

// start starts exe detached as Launch describes. With pipe, the new
// process's stdin is a pipe whose write end start returns; else stdin is
// /dev/null and the write end is nil. stdout, when not nil, is the new
// process's stdout instead of /dev/null.
func start(exe string, args, env []string, pipe bool, stdout *os.File) (*os.Process, *os.File, error) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("launch %s: %w", exe, err)
	}
	defer null.Close()
	stdin, w := null, (*os.File)(nil)
	if pipe {
		r, pw, err := os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("launch %s: pipe for the spec: %w", exe, err)
		}
		defer r.Close() // the shim has its own copy
		stdin, w = r, pw
	}
	out := null
	if stdout != nil {
		out = stdout
	}
	p, err := os.StartProcess(exe, append([]string{exe}, args...), &os.ProcAttr{
		Env:   env,
		Files: []*os.File{stdin, out, null},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		if w != nil {
			w.Close()
		}
		return nil, nil, fmt.Errorf("launch %s: %w", exe, err)
	}
	return p, w, nil
}
