package main_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// TestReadOnlyCommandsWriteNothing is the black-box proof that the
// commands that only read never write: every one of them is run on a real
// home, with a gateway running and then with none, and the store file's
// SHA-256 must not move. With no gateway, the store file is chmod 0400:
// each read command works, and shows what the runner's reconcile would
// record (a task whose shim died, shown lost); each command that writes
// fails, saying the file is read-only. Then the whole home is made
// read-only, and the read commands still work. The next writer records
// the lost task.
//
// Root ignores file modes, and tests often run as root: the commands then
// run without the capabilities that let root do so (see modeBound), so
// the modes bind them as they bind a user. Where dropping them is not
// allowed, the test says so, and the hash and home-listing checks (which
// hold for any user) remain the proof.
func TestReadOnlyCommandsWriteNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	dir, work, logf := e2eDirs(t)
	fg := newModeBound(t, bin, dir)
	db := filepath.Join(dir, home.DBFile)
	gate := filepath.Join(work, "gate.lobster")
	require.NoError(t, os.WriteFile(gate, []byte("name: gate\nsteps:\n  - id: hello\n    run: echo hi\n  - id: review\n    approval: Go on?\n"), 0o600))

	g := startGateway(t, bin, dir, logf)
	fg.ok("cron", "add", "--name", "nightly", "--every", "1h", "--command", "true")
	var task stored.Task
	var parked struct {
		FlowID           string `json:"flowId"`
		RequiresApproval struct {
			ApprovalID string `json:"approvalId"`
		} `json:"requiresApproval"`
	}
	require.NoError(t, json.Unmarshal([]byte(fg.ok("pipeline", "run", gate, "--mode", "tool")), &parked))
	fg.ok("tasks", "run", "--", "echo", "hi")
	require.NoError(t, json.Unmarshal([]byte(fg.ok("tasks", "run", "--detach", "--json", "--", "sleep", "300")), &task))
	waitRunning(t, fg, task.ID)

	reads := [][]string{
		{"tasks"}, {"tasks", "list"}, {"tasks", "show", task.ID}, {"tasks", "logs", task.ID},
		{"tasks", "flow", "list"}, {"tasks", "flow", "show", task.FlowID}, {"tasks", "flow", "show", parked.FlowID},
		{"tasks", "audit"}, {"tasks", "maintenance"}, {"check"}, {"approvals"},
		{"cron", "list"}, {"cron", "show", "nightly"}, {"cron", "runs", "nightly"}, {"cron", "status"},
		{"plugins", "list"}, {"gateway", "status"},
	}
	// readAll runs every read command, each of which must work and leave
	// the store file as it was.
	readAll := func(when string, gateway bool) {
		t.Helper()
		before := hashOf(t, db)
		for _, args := range reads {
			name := strings.Join(args, " ")
			code, out, errOut := fg.run(args...)
			if name == "gateway status" && !gateway {
				require.Equal(t, 1, code, "%s, %s: %s", when, name, errOut)
				require.Contains(t, out, "No gateway is running", "%s, %s", when, name)
			} else {
				require.Equal(t, 0, code, "%s, %s: %s", when, name, errOut)
			}
			require.Equal(t, before, hashOf(t, db), "%s, %s changed the store file", when, name)
		}
	}
	readAll("with a gateway running", true)

	// The gateway dies, and so does the shim of the sleeping task: the
	// task is lost, which only a reconcile can tell.
	g.kill(t)
	killShim(t, runner.LogDir(dir, task.ID, 1))
	// A flow whose controller no gateway serves, made now: a gateway
	// would retry its events (and write) all along.
	var flow sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(fg.ok("tasks", "flow", "create", "--controller", "c", "--goal", "g", "--owner", "o", "--json")), &flow))
	require.NoError(t, os.Chmod(db, 0o400))
	listing := listHome(t, dir)
	readAll("with no gateway, on a 0400 store", false)
	_, out, _ := fg.run("tasks", "show", task.ID, "--json")
	require.Contains(t, out, `"status": "lost"`, "a read command does not show the dead shim's task as lost")
	require.Equal(t, listing, listHome(t, dir), "a read command changed the home")

	writes := [][]string{
		{"tasks", "run", "--", "true"}, {"tasks", "run", "--detach", "--", "true"}, {"tasks", "cancel", task.ID},
		{"tasks", "flow", "create", "--controller", "c", "--goal", "g", "--owner", "o"},
		{"tasks", "flow", "cancel", flow.ID}, {"tasks", "flow", "update", flow.ID, "--expected-revision", "1", "--status", "running"},
		{"tasks", "flow", "approve", parked.FlowID}, {"tasks", "flow", "deny", parked.FlowID},
		{"tasks", "maintenance", "--apply"},
		{"cron", "add", "--name", "x", "--every", "1h", "--command", "true"}, {"cron", "edit", "nightly", "--every", "2h"},
		{"cron", "disable", "nightly"}, {"cron", "enable", "nightly"}, {"cron", "rm", "nightly"}, {"cron", "run", "nightly"},
		{"pipeline", "run", gate}, {"pipeline", "resume", "--id", parked.RequiresApproval.ApprovalID, "--approve", "yes"},
		{"gateway"},
	}
	before := hashOf(t, db)
	for _, args := range writes {
		name := strings.Join(args, " ")
		code, _, errOut := fg.run(args...)
		require.NotEqual(t, 0, code, "%s worked on a 0400 store", name)
		require.Contains(t, errOut, "is read-only (mode 0400) and this command changes records: make it writable (chmod u+w "+db+")", name)
		require.Equal(t, before, hashOf(t, db), "%s changed a 0400 store file", name)
	}

	// A home no one may write: the read commands still work.
	restore := readOnlyHome(t, dir)
	if fg.binds() {
		_, _, err := fg.exec(exec.Command("touch", filepath.Join(dir, "probe")))
		require.Error(t, err, "file modes do not bind the commands: they could write into a read-only home")
	}
	readAll("with no gateway, in a read-only home", false)
	restore()
	require.Equal(t, listing, listHome(t, dir), "a command changed the home")
	require.NoError(t, os.Chmod(db, 0o600))

	// The next writer records what the readers only showed.
	fg.ok("tasks", "flow", "create", "--controller", "c", "--goal", "g", "--owner", "o")
	require.NotEqual(t, before, hashOf(t, db))
	base, err := store.OpenReadOnly(db, store.Options{})
	require.NoError(t, err)
	defer base.Close()
	eng, err := engine.New(base, engine.Config{})
	require.NoError(t, err)
	got, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskLost, got.Status)
}

// modeBound runs the flowgate binary on one home, bound by file modes.
type modeBound struct {
	t         *testing.T
	bin, home string
	// drop is set when this process runs as root and may drop the
	// capabilities that let root ignore file modes.
	drop bool
}

// rootCaps are the capabilities with which root ignores file modes.
var rootCaps = []uintptr{unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH, unix.CAP_FOWNER}

func newModeBound(t *testing.T, bin, home string) *modeBound {
	m := &modeBound{t: t, bin: bin, home: home}
	if os.Geteuid() != 0 {
		return m
	}
	m.drop = true
	if _, _, err := m.exec(exec.Command("true")); err != nil {
		t.Logf("running as root, and dropping %v is not allowed here (%v): file modes do not bind the commands, and the hash and listing checks are the proof", rootCaps, err)
		m.drop = false
	}
	return m
}

// binds reports whether file modes bind the commands m runs.
func (m *modeBound) binds() bool { return m.drop || os.Geteuid() != 0 }

// run runs flowgate with args and returns its exit code and output.
func (m *modeBound) run(args ...string) (code int, stdout, stderr string) {
	m.t.Helper()
	cmd := exec.Command(m.bin, append([]string{"--home", m.home}, args...)...)
	out, errOut, err := m.exec(cmd)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out, errOut
	case err != nil:
		m.t.Fatalf("run flowgate %s: %v", strings.Join(args, " "), err)
	}
	return 0, out, errOut
}

// ok runs flowgate with args, requires it to succeed, and returns its
// stdout.
func (m *modeBound) ok(args ...string) string {
	m.t.Helper()
	code, out, errOut := m.run(args...)
	require.Equal(m.t, 0, code, "flowgate %s: %s", strings.Join(args, " "), errOut)
	return out
}

// exec runs cmd, as root without rootCaps when m.drop is set. The caps
// are dropped from the bounding set of one OS thread, which the child
// forked from it inherits; the thread stays locked, so Go ends it with
// its goroutine and nothing else runs on it.
func (m *modeBound) exec(cmd *exec.Cmd) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if !m.drop {
		err = cmd.Run()
		return out.String(), errOut.String(), err
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		for _, c := range rootCaps {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil {
				done <- fmt.Errorf("drop capability %d: %w", c, err)
				return
			}
		}
		done <- cmd.Run()
	}()
	err = <-done
	return out.String(), errOut.String(), err
}

// waitRunning waits, bounded, until task id runs and its command's pid
// is recorded: the last write the gateway makes for it.
func waitRunning(t *testing.T, fg *modeBound, id string) {
	t.Helper()
	polltest.Until(t, "", func() (bool, string) {
		var task stored.Task
		require.NoError(t, json.Unmarshal([]byte(fg.ok("tasks", "show", id, "--json")), &task))
		return task.Status == sdk.TaskRunning && task.PID != 0, "task " + id + " did not start"
	}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))
}

// killShim SIGKILLs the shim of an attempt and its command, and waits,
// bounded, until the shim is gone.
func killShim(t *testing.T, dir string) {
	t.Helper()
	rec, err := shim.ReadRecord(dir)
	require.NoError(t, err)
	s, child := rec.Shim, rec.Child
	require.True(t, s != nil && child != nil, "the attempt record holds shim %v, child %v; want both", s, child)
	require.NoError(t, syscall.Kill(s.PID, syscall.SIGKILL))
	require.NoError(t, syscall.Kill(-child.PGID, syscall.SIGKILL))
	polltest.Until(t, "", func() (bool, string) {
		return !alive(s.PID), "the shim survived SIGKILL"
	}, polltest.Within(10*time.Second), polltest.Every(10*time.Millisecond))
}

func hashOf(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(data)
}

// listHome describes every file under dir: path, size, mode and
// modification time, one a line.
func listHome(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %s %s\n", path, info.Size(), info.Mode(), info.ModTime().Format(time.RFC3339Nano))
		return nil
	}))
	return b.String()
}

// readOnlyHome makes every directory under dir (dir too) mode 0500 and
// every other file 0400, and returns a function that puts the modes back.
// The modes are also put back if the test fails first, so that its
// directories can be removed.
func readOnlyHome(t *testing.T, dir string) (restore func()) {
	t.Helper()
	modes := map[string]fs.FileMode{}
	var paths []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSocket != 0 {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		modes[p] = info.Mode().Perm()
		paths = append(paths, p)
		return nil
	}))
	restore = func() {
		for p, m := range modes {
			_ = os.Chmod(p, m)
		}
	}
	t.Cleanup(restore)
	// Deepest first, so a directory is walked before it is closed.
	for i := len(paths) - 1; i >= 0; i-- {
		mode := fs.FileMode(0o400)
		if fi, err := os.Stat(paths[i]); err == nil && fi.IsDir() {
			mode = 0o500
		}
		require.NoError(t, os.Chmod(paths[i], mode))
	}
	return restore
}
