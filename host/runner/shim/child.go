package shim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// startError is a failure to start the child, with the exit code the
// status reports for it.
type startError struct {
	code int
	err  error
}

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

func cannotRun(format string, a ...any) *startError {
	return &startError{code: ExitCannotRun, err: fmt.Errorf(format, a...)}
}

// startChild starts the command of spec in its own process group, with
// its output appended to the files in dir, and returns its pid.
func startChild(dir string, spec Spec) (int, error) {
	env := childEnv(os.Environ(), spec)
	argv := spec.Argv
	if spec.Shell != "" {
		argv = []string{"/bin/sh", "-c", spec.Shell}
	}
	if spec.Cwd != "" {
		if fi, err := os.Stat(spec.Cwd); err != nil {
			return 0, cannotRun("cwd: %w", err)
		} else if !fi.IsDir() {
			return 0, cannotRun("cwd %s: not a directory", spec.Cwd)
		}
	}
	path, err := lookPath(argv[0], getenv(env, "PATH"), spec.Cwd)
	if err != nil {
		return 0, err
	}
	stdinPath := spec.StdinPath
	if stdinPath == "" {
		stdinPath = os.DevNull
	}
	stdin, err := os.Open(stdinPath)
	if err != nil {
		return 0, cannotRun("stdin: %w", err)
	}
	defer stdin.Close()
	var out [2]*os.File
	for i, name := range []string{StdoutFile, StderrFile} {
		f, err := openTaskFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND)
		if err != nil {
			return 0, cannotRun("output: %w", err)
		}
		defer f.Close()
		out[i] = f
	}
	// The files are the child's fds 0-2 themselves: the shim never copies
	// output, whatever its volume.
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Dir:   spec.Cwd,
		Env:   env,
		Files: []uintptr{stdin.Fd(), out[0].Fd(), out[1].Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		return 0, execError(argv[0], err)
	}
	return pid, nil
}

// execError classifies a failed exec the way a shell does: 127 when
// something was not found, 126 otherwise.
func execError(name string, err error) *startError {
	e := &exec.Error{Name: name, Err: err}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return &startError{code: ExitNotFound, err: e}
	}
	return &startError{code: ExitCannotRun, err: e}
}

// lookPath finds the executable the child runs for name: a name with a
// slash is a path (relative to cwd), any other is searched in pathEnv,
// the child's PATH, with relative entries taken relative to cwd. Like a
// shell, it reports a file found but not executable only when no
// executable one is found.
func lookPath(name, pathEnv, cwd string) (string, error) {
	abs := func(p string) string {
		if filepath.IsAbs(p) || cwd == "" {
			return p
		}
		return filepath.Join(cwd, p)
	}
	if strings.Contains(name, "/") {
		p := abs(name)
		if err := executable(p); err != nil {
			return "", execError(name, err)
		}
		return p, nil
	}
	var denied error
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		p := abs(filepath.Join(d, name))
		err := executable(p)
		if err == nil {
			return p, nil
		}
		if denied == nil && errors.Is(err, fs.ErrPermission) {
			denied = err
		}
	}
	if denied != nil {
		return "", execError(name, denied)
	}
	return "", execError(name, exec.ErrNotFound)
}

// executable returns nil when path is a file with an execute bit, an
// error matching fs.ErrNotExist when there is nothing there, and one
// matching fs.ErrPermission otherwise. exec itself has the last word.
func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fs.ErrNotExist
		}
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fs.ErrPermission
	}
	return nil
}

// childEnv is the child's environment: the shim's own, then spec.Env,
// then the FLOWGATE_* variables, each layer overriding the one before. An
// inherited FLOWGATE_PROGRESS is dropped when the spec has no progress
// file, so a task started from inside another task never writes to its
// parent's.
func childEnv(base []string, spec Spec) []string {
	vars := make(map[string]string, len(base)+len(spec.Env)+4)
	var order []string
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			set(k, v)
		}
	}
	keys := make([]string, 0, len(spec.Env))
	for k := range spec.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		set(k, spec.Env[k])
	}
	set("FLOWGATE_TASK_ID", spec.TaskID)
	set("FLOWGATE_FLOW_ID", spec.FlowID)
	set("FLOWGATE_ATTEMPT", strconv.Itoa(spec.Attempt))
	if spec.ProgressPath != "" {
		set("FLOWGATE_PROGRESS", spec.ProgressPath)
	} else {
		delete(vars, "FLOWGATE_PROGRESS")
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		if v, ok := vars[k]; ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func getenv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
