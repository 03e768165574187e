package shim

import (
	"fmt"
	"os"
	"syscall"
)

// Launch starts exe with args as a detached process, the way the gateway
// starts "flowgate shim D": in a new session (so it has no controlling
// terminal and no signal aimed at the gateway's group reaches it), with
// stdin, stdout and stderr on /dev/null, and without a parent-death
// signal, so it outlives the caller even a SIGKILLed one. exe is a path;
// it is not looked up in PATH. env is the whole environment of the new
// process; nil means the caller's. The new process keeps the caller's
// working directory.
//
// The caller should Wait on the returned process if it stays alive long
// enough to reap it; if the caller dies first, init (or the nearest
// subreaper) reaps it.
func Launch(exe string, args []string, env []string) (*os.Process, error) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("launch %s: %w", exe, err)
	}
	defer null.Close()
	p, err := os.StartProcess(exe, append([]string{exe}, args...), &os.ProcAttr{
		Env:   env,
		Files: []*os.File{null, null, null},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("launch %s: %w", exe, err)
	}
	return p, nil
}
