package shim_test

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// helperDirEnv makes the test binary run as the shim of the attempt
// directory it names (go-plugin's helper-process pattern).
const helperDirEnv = "FLOWGATE_SHIM_TEST_DIR"

func TestShimHelper(t *testing.T) {
	dir := os.Getenv(helperDirEnv)
	if dir == "" {
		t.Skip("runs only as the shim of another test")
	}
	if log := os.Getenv(helperSyncLogEnv); log != "" {
		shim.LogSyncsTo(log)
	}
	os.Exit(shim.Main(dir))
}

// waitLimit bounds every wait on a shim or a file it writes.
const waitLimit = 30 * time.Second

// attempt is one shim run by a test.
type attempt struct {
	dir   string
	proc  *os.Process
	done  chan struct{}
	state *os.ProcessState // set once done is closed
}

// launch starts the test binary as the shim of dir, with env added to the
// test's environment.
func launch(t *testing.T, dir string, env ...string) *attempt {
	t.Helper()
	env = append(append(os.Environ(), env...), helperDirEnv+"="+dir,
		// Under -race, a process sleeps 1s at exit by default.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	p, err := shim.Launch(os.Args[0], []string{"-test.run=^TestShimHelper$"}, env)
	require.NoError(t, err)
	a := &attempt{dir: dir, proc: p, done: make(chan struct{})}
	go func() {
		a.state, _ = p.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		select {
		case <-a.done:
		default:
			_ = p.Kill()
			<-a.done
		}
		if rec, err := shim.ReadRecord(a.dir); err == nil && rec.Child != nil && shim.Alive(*rec.Child) {
			_ = shim.SignalGroup(rec.Child.PGID, syscall.SIGKILL)
		}
	})
	return a
}

// start launches the shim of a new attempt directory and hands it spec on
// its stdin, as the gateway does.
func start(t *testing.T, spec shim.Spec, env ...string) *attempt {
	t.Helper()
	dir := t.TempDir()
	if spec.Cwd == "." {
		spec.Cwd = dir
	}
	entry, err := shim.SpecEntry(spec)
	require.NoError(t, err)
	return launch(t, dir, append(env, entry)...)
}

func (a *attempt) path(name string) string { return filepath.Join(a.dir, name) }

// record returns what the attempt's record holds now.
func (a *attempt) record(t *testing.T) shim.Record {
	t.Helper()
	rec, err := shim.ReadRecord(a.dir)
	require.NoError(t, err)
	return rec
}

// wait waits for the shim to exit and returns the status it wrote.
func (a *attempt) wait(t *testing.T) shim.Status {
	t.Helper()
	select {
	case <-a.done:
	case <-time.After(waitLimit):
		t.Fatalf("the shim did not exit within %s", waitLimit)
	}
	rec := a.record(t)
	require.NotNil(t, rec.Status, "the shim exited without recording a status")
	return *rec.Status
}

// read returns the content of the attempt file name.
func (a *attempt) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(a.path(name))
	require.NoError(t, err)
	return string(b)
}

// waitFile waits until the attempt file name exists.
func (a *attempt) waitFile(t *testing.T, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := os.Stat(a.path(name))
		return err == nil
	}, waitLimit, 5*time.Millisecond, "waiting for %s", name)
}

// requireGroupGone checks that no process of the child's group is left,
// not even a zombie.
func (a *attempt) requireGroupGone(t *testing.T) {
	t.Helper()
	c := a.record(t).Child
	require.NotNil(t, c, "the shim recorded no child")
	require.Equal(t, c.PID, c.PGID)
	require.ErrorIs(t, syscall.Kill(-c.PGID, 0), syscall.ESRCH, "process group %d is not empty", c.PGID)
}

func dur(d time.Duration) sdk.Duration { return sdk.Duration(d) }

func TestShimOutcomes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		spec      func(dir string) shim.Spec
		code      int
		signal    string
		reason    string
		errSubstr string
		stdout    string
	}{
		{name: "exit 0", spec: shell("exit 0")},
		{name: "exit 3", spec: shell("exit 3"), code: 3},
		{name: "killed by a signal", spec: shell("kill -9 $$"), code: 137, signal: "SIGKILL"},
		{name: "stdin defaults to /dev/null", spec: argv("cat")},
		{
			name: "command not found", spec: argv("flowgate-no-such-command"),
			code: 127, reason: "start-failed",
			errSubstr: `exec: "flowgate-no-such-command": executable file not found in $PATH`,
		},
		{
			name: "path not found", spec: argv("/nonexistent/flowgate-cmd"),
			code: 127, reason: "start-failed", errSubstr: "/nonexistent/flowgate-cmd",
		},
		{
			name: "not executable",
			spec: func(dir string) shim.Spec {
				p := filepath.Join(dir, "script.sh")
				must(os.WriteFile(p, []byte("#!/bin/sh\necho hi\n"), 0o644))
				return shim.Spec{Argv: []string{p}}
			},
			code: 126, reason: "start-failed", errSubstr: "script.sh\": permission denied",
		},
		{
			name: "a directory is not a command",
			spec: func(dir string) shim.Spec { return shim.Spec{Argv: []string{dir}} },
			code: 126, reason: "start-failed", errSubstr: "permission denied",
		},
		{
			name: "missing cwd",
			spec: func(dir string) shim.Spec {
				return shim.Spec{Shell: "true", Cwd: filepath.Join(dir, "gone")}
			},
			code: 126, reason: "start-failed", errSubstr: "cwd: stat ",
		},
		{
			name: "missing stdin file",
			spec: func(dir string) shim.Spec {
				return shim.Spec{Shell: "cat", StdinPath: filepath.Join(dir, "gone")}
			},
			code: 126, reason: "start-failed", errSubstr: "stdin: open ",
		},
		{
			name: "stdin file",
			spec: func(dir string) shim.Spec {
				p := filepath.Join(dir, "in")
				must(os.WriteFile(p, []byte("fed\n"), 0o600))
				return shim.Spec{Argv: []string{"cat"}, StdinPath: p}
			},
			stdout: "fed\n",
		},
		{
			name: "command found in the spec's PATH",
			spec: func(dir string) shim.Spec {
				bin := script(dir, "flowgate-test-tool", "echo tool")
				return shim.Spec{Argv: []string{"flowgate-test-tool"}, Env: map[string]string{"PATH": bin + ":/usr/bin:/bin"}}
			},
			stdout: "tool\n",
		},
		{
			name: "relative command resolved against cwd",
			spec: func(dir string) shim.Spec {
				bin := script(dir, "tool", "pwd")
				return shim.Spec{Argv: []string{"./tool"}, Cwd: bin}
			},
			stdout: "BIN\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			require.NoError(t, shim.WriteSpec(dir, tc.spec(dir)))
			a := launch(t, dir)
			st := a.wait(t)
			require.Equal(t, 0, a.state.ExitCode(), "the shim's own exit code")
			require.Equal(t, tc.code, st.ExitCode)
			require.Equal(t, tc.signal, st.Signal)
			require.Equal(t, tc.reason, st.Reason)
			if tc.errSubstr != "" {
				require.Contains(t, st.Error, tc.errSubstr)
			} else {
				require.Empty(t, st.Error)
			}
			require.False(t, st.StartedAt.IsZero())
			require.False(t, st.EndedAt.Before(st.StartedAt))
			child := a.record(t).Child
			if tc.reason == shim.ReasonStartFailed {
				require.Nil(t, child, "no child identity when the child never started")
				return
			}
			require.NotNil(t, child, "the started child's identity is recorded")
			require.Equal(t, strings.ReplaceAll(tc.stdout, "BIN", filepath.Join(dir, "bin")), a.read(t, shim.StdoutFile))
		})
	}
}

func shell(cmd string) func(string) shim.Spec {
	return func(string) shim.Spec { return shim.Spec{Shell: cmd} }
}

func argv(args ...string) func(string) shim.Spec {
	return func(string) shim.Spec { return shim.Spec{Argv: args} }
}

// script writes an executable shell script name into dir/bin and returns
// that directory.
func script(dir, name, body string) string {
	bin := filepath.Join(dir, "bin")
	must(os.MkdirAll(bin, 0o700))
	must(os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o700))
	return bin
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func TestShimOutputAppendsToFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, shim.StdoutFile), []byte("before\n"), 0o600))
	require.NoError(t, shim.WriteSpec(dir, shim.Spec{Shell: "echo out; echo err >&2; echo more"}))
	a := launch(t, dir)
	require.Equal(t, 0, a.wait(t).ExitCode)
	require.Equal(t, "before\nout\nmore\n", a.read(t, shim.StdoutFile))
	require.Equal(t, "err\n", a.read(t, shim.StderrFile))
	fi, err := os.Stat(a.path(shim.StderrFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestShimEnvironment(t *testing.T) {
	t.Parallel()
	spec := shim.Spec{
		TaskID: "task-1", FlowID: "flow-1", Attempt: 2,
		Argv: []string{"env"},
		Env: map[string]string{
			"FLOWGATE_TEST_SPEC":      "from spec",
			"FLOWGATE_TEST_INHERITED": "overridden",
			"FLOWGATE_TASK_ID":        "hijacked",
		},
	}
	inherited := []string{"FLOWGATE_TEST_INHERITED=inherited", "FLOWGATE_TEST_KEPT=kept", "FLOWGATE_PROGRESS=/outer/progress"}

	t.Run("with a progress file", func(t *testing.T) {
		t.Parallel()
		s := spec
		s.ProgressPath = filepath.Join(t.TempDir(), "progress.jsonl")
		a := start(t, s, inherited...)
		require.Equal(t, 0, a.wait(t).ExitCode)
		env := envMap(a.read(t, shim.StdoutFile))
		require.Equal(t, "task-1", env["FLOWGATE_TASK_ID"], "the spec cannot override FLOWGATE_*")
		require.Equal(t, "flow-1", env["FLOWGATE_FLOW_ID"])
		require.Equal(t, "2", env["FLOWGATE_ATTEMPT"])
		require.Equal(t, s.ProgressPath, env["FLOWGATE_PROGRESS"])
		require.Equal(t, "from spec", env["FLOWGATE_TEST_SPEC"])
		require.Equal(t, "overridden", env["FLOWGATE_TEST_INHERITED"])
		require.Equal(t, "kept", env["FLOWGATE_TEST_KEPT"])
		require.NotEmpty(t, env["PATH"])
	})
	t.Run("without one, an inherited FLOWGATE_PROGRESS is dropped", func(t *testing.T) {
		t.Parallel()
		a := start(t, spec, inherited...)
		require.Equal(t, 0, a.wait(t).ExitCode)
		env := envMap(a.read(t, shim.StdoutFile))
		require.NotContains(t, env, "FLOWGATE_PROGRESS")
		require.Equal(t, "task-1", env["FLOWGATE_TASK_ID"])
	})
}

func envMap(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// The shim must not pass its own signal handling on: an ignored signal
// stays ignored across exec.
func TestShimChildSignalsNotIgnored(t *testing.T) {
	t.Parallel()
	a := start(t, shim.Spec{Argv: []string{"cat", "/proc/self/status"}})
	require.Equal(t, 0, a.wait(t).ExitCode)
	var ignored uint64
	for _, line := range strings.Split(a.read(t, shim.StdoutFile), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			var err error
			ignored, err = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			require.NoError(t, err)
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGPIPE, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD} {
		require.Zero(t, ignored&(1<<(sig-1)), "%v is ignored in the child", sig)
	}
}

func TestShimIdentityFiles(t *testing.T) {
	t.Parallel()
	// The child sees the record: the shim claimed the attempt before
	// starting it.
	a := start(t, shim.Spec{Shell: "test -s " + shim.RecordFile, Cwd: "."})
	st := a.wait(t)
	require.Equal(t, 0, st.ExitCode, "the record did not exist when the child ran")

	rec := a.record(t)
	s, c := rec.Shim, rec.Child
	require.NotNil(t, s, "the shim recorded no identity")
	require.NotNil(t, c, "the shim recorded no child")
	require.Equal(t, a.proc.Pid, s.PID)
	require.Equal(t, a.proc.Pid, s.PGID, "the shim leads its own session and group")
	require.NotZero(t, s.StartTime)

	require.NotEqual(t, s.PID, c.PID)
	require.Equal(t, c.PID, c.PGID, "the child leads its own group")
	require.GreaterOrEqual(t, c.StartTime, s.StartTime)
	require.False(t, c.StartedAt.Before(s.StartedAt), "the child recorded after the shim")
	require.True(t, c.StartedAt.Equal(st.StartedAt))
	require.False(t, shim.Alive(*c), "the child is gone")
	require.False(t, shim.Alive(*s), "the shim is gone")

	claimed, err := shim.Claimed(a.dir)
	require.NoError(t, err)
	require.True(t, claimed)
	claimed, err = shim.Claimed(t.TempDir())
	require.NoError(t, err)
	require.False(t, claimed)

	// One record written in place, and the output: no spec file, no
	// temporary files.
	entries, err := os.ReadDir(a.dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	require.Equal(t, []string{shim.RecordFile, "stderr", "stdout"}, names)
}

func TestShimBadSpec(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		write     func(dir string) error
		errSubstr string
	}{
		{"missing", func(string) error { return nil }, "spec.json: no such file"},
		{"not JSON", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, shim.SpecFile), []byte("{argv"), 0o600)
		}, "spec.json: invalid character"},
		{"invalid", func(dir string) error {
			return shim.WriteJSONAtomic(filepath.Join(dir, shim.SpecFile), shim.Spec{Argv: []string{"true"}, Shell: "true"})
		}, "spec.json: spec: argv and shell are both set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			require.NoError(t, tc.write(dir))
			a := launch(t, dir)
			st := a.wait(t)
			require.Equal(t, 2, a.state.ExitCode(), "the shim's own exit code")
			require.Equal(t, 126, st.ExitCode)
			require.Equal(t, "start-failed", st.Reason)
			require.Contains(t, st.Error, tc.errSubstr)
			require.Nil(t, a.record(t).Child, "no child identity: the child never started")
		})
	}
}

// An attempt directory no shim wrote to has an empty record: no error,
// and every field nil.
func TestReadRecordMissing(t *testing.T) {
	t.Parallel()
	rec, err := shim.ReadRecord(t.TempDir())
	require.NoError(t, err)
	require.Equal(t, shim.Record{}, rec)
}
