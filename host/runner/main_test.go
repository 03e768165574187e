package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// shimEnv makes the test binary run as a shim: "<test binary> <dir>" with
// FLOWGATE_TEST_SHIM=1 is "flowgate shim <dir>" (go-plugin's
// helper-process pattern).
const shimEnv = "FLOWGATE_TEST_SHIM"

// shimHoldEnv, set to a path, makes a test shim wait, before it claims its
// attempt, until a file is there (or waitLimit passes): a shim the
// machine is slow to start.
const shimHoldEnv = "FLOWGATE_TEST_SHIM_HOLD"

func holdShim(path string) {
	for end := time.Now().Add(waitLimit); path != "" && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(shimEnv) == "1" {
		holdShim(os.Getenv(shimHoldEnv))
		os.Exit(shim.Main(os.Args[len(os.Args)-1]))
	}
	// Started through a link named flowgate-shim (see warmShims), the
	// test binary is the lean shim: "flowgate-shim --warm" or
	// "flowgate-shim <dir>".
	if filepath.Base(os.Args[0]) == runner.ShimBinary && len(os.Args) == 2 {
		if os.Args[1] == shim.WarmArg {
			os.Exit(shim.MainWarm())
		}
		os.Exit(shim.Main(os.Args[1]))
	}
	// Started through a link named flowgate (see loneShims), it is the
	// whole flowgate binary's shim command: "flowgate shim --warm" or
	// "flowgate shim <dir>".
	if filepath.Base(os.Args[0]) == "flowgate" && len(os.Args) == 3 && os.Args[1] == "shim" {
		if os.Args[2] == shim.WarmArg {
			os.Exit(shim.MainWarm())
		}
		os.Exit(shim.Main(os.Args[2]))
	}
	code := m.Run()
	sharedEtcd.Close()
	os.Exit(code)
}

// sharedEtcd is the package's embedded etcd, started by the first test
// that needs one.
var sharedEtcd etcdtest.Lazy

// waitLimit bounds every wait for a task, a file or a process.
const waitLimit = 20 * time.Second

// launchShim starts the test binary as the shim of attempt directory dir.
func launchShim(dir string, env []string) (*os.Process, error) {
	env = append(env, shimEnv+"=1",
		// Under -race, a process sleeps 1s at exit by default.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return shim.Launch(os.Args[0], []string{dir}, env)
}

// gateway is what a flowgate gateway holds: a store, the engine over it
// and a runner wired to the engine's changes.
type gateway struct {
	st  *store.Bolt
	eng *engine.Engine
	run *runner.Runner
}

// home is a flowgate home in t.TempDir(). The gateways a test opens on it
// in turn share its store file and task logs, as successive gateway
// processes would.
type home struct {
	t   *testing.T
	dir string
	cfg runner.Config
	gw  *gateway
}

// newHome opens a gateway on a new home without starting its runner, so a
// test can first arrange what the runner finds. tune, if not nil, adjusts
// the runner config.
func newHome(t *testing.T, tune func(*runner.Config)) *home {
	t.Helper()
	dir := t.TempDir()
	h := &home{t: t, dir: dir, cfg: runner.Config{
		Home: dir, Launch: launchShim, Poll: 20 * time.Millisecond, Grace: 500 * time.Millisecond,
	}}
	if tune != nil {
		tune(&h.cfg)
	}
	h.open()
	t.Cleanup(h.cleanup)
	return h
}

// startHome is newHome with the runner started.
func startHome(t *testing.T, tune func(*runner.Config)) *home {
	t.Helper()
	h := newHome(t, tune)
	h.start()
	return h
}

func (h *home) eng() *engine.Engine { return h.gw.eng }

// open opens the store and builds an engine and a runner over it, wired
// the way host/gateway does.
func (h *home) open() {
	h.t.Helper()
	st, err := store.Open(filepath.Join(h.dir, "flowgate.db"), store.Options{})
	require.NoError(h.t, err)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(h.t, err)
	r, err := runner.New(eng, h.cfg)
	require.NoError(h.t, err)
	eng.Listen("runner", r)
	eng.StartAtCreation(r)
	h.gw = &gateway{st: st, eng: eng, run: r}
}

func (h *home) start() {
	h.t.Helper()
	require.NoError(h.t, h.gw.run.Start(context.Background()))
}

// close stops the runner, leaving its tasks running under their shims,
// and closes the store: the gateway goes away.
func (h *home) close() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(h.t, h.gw.run.Stop(ctx))
	require.NoError(h.t, h.gw.st.Close())
	h.gw = nil
}

// restart closes the gateway and opens and starts a new one on the same
// home.
func (h *home) restart() {
	h.t.Helper()
	h.close()
	h.open()
	h.start()
}

// cleanup closes the gateway and kills whatever a failed test left
// running, so that t.TempDir can be removed.
func (h *home) cleanup() {
	if h.gw != nil {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := h.gw.run.Stop(ctx); err != nil {
			h.t.Errorf("stop the runner: %v", err)
		}
		if err := h.gw.st.Close(); err != nil {
			h.t.Errorf("close the store: %v", err)
		}
	}
	// A first attempt's directory is the task's own (logs/<task>), a
	// later one's or an older gateway's a subdirectory of it.
	dirs, _ := filepath.Glob(filepath.Join(h.dir, "logs", "*"))
	later, _ := filepath.Glob(filepath.Join(h.dir, "logs", "*", "*"))
	dirs = append(dirs, later...)
	for _, dir := range dirs {
		rec, err := shim.ReadRecord(dir)
		if err != nil {
			continue
		}
		if c := rec.Child; c != nil && c.PID != os.Getpid() && shim.Alive(*c) {
			_ = shim.SignalGroup(c.PGID, syscall.SIGKILL)
		}
		s := rec.Shim
		if s == nil || s.PID == os.Getpid() {
			continue
		}
		_ = shim.Signal(*s, syscall.SIGKILL)
		for end := time.Now().Add(waitLimit); shim.Alive(*s) && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// spec is a task spec that runs line with /bin/sh -c in the home, so the
// files it writes land in t.TempDir().
func (h *home) spec(line string) sdk.TaskSpec {
	return sdk.TaskSpec{Shell: line, Cwd: h.dir}
}

// create stores a new detached task; the runner starts it when it can.
func (h *home) create(spec sdk.TaskSpec) *stored.Task {
	h.t.Helper()
	task, created, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "t", Spec: spec})
	require.NoError(h.t, err)
	require.True(h.t, created)
	return task
}

// wait waits for task id to end.
func (h *home) wait(id string) *stored.Task {
	h.t.Helper()
	return waitTask(h.t, h.eng(), id, ended, waitLimit)
}

// path is the absolute path of a file in the home.
func (h *home) path(name string) string { return filepath.Join(h.dir, name) }

// lines returns the lines of the file name in the home; none when it does
// not exist.
func (h *home) lines(name string) []string {
	h.t.Helper()
	b, err := os.ReadFile(h.path(name))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(h.t, err)
	return strings.Fields(string(b))
}

func ended(t *stored.Task) bool { return t.Status.Terminal() }

func running(t *stored.Task) bool { return t.Status == sdk.TaskRunning }

// waitTask polls task id until cond holds, and fails the test when it
// does not within limit.
func waitTask(t *testing.T, eng *engine.Engine, id string, cond func(*stored.Task) bool, limit time.Duration) *stored.Task {
	t.Helper()
	var task *stored.Task
	polltest.Until(t, "task "+id+" to get there", func() (bool, string) {
		var err error
		task, err = eng.GetTask(id)
		require.NoError(t, err)
		return cond(task), fmt.Sprintf("task %s: status %s, attempts %d, reason %q, errors %q", id, task.Status, task.Attempts, task.Reason, task.Errors)
	}, polltest.Within(limit), polltest.Every(10*time.Millisecond))
	return task
}

// childStarted reports whether the shim of attempt directory dir recorded
// its child's start.
func childStarted(dir string) bool {
	rec, err := shim.ReadRecord(dir)
	return err == nil && rec.Child != nil
}

// attemptEnded reports whether the shim of attempt directory dir recorded
// how the attempt ended.
func attemptEnded(dir string) bool {
	rec, err := shim.ReadRecord(dir)
	return err == nil && rec.Status != nil
}

// recorded returns the record of attempt directory dir.
func recorded(t *testing.T, dir string) shim.Record {
	t.Helper()
	rec, err := shim.ReadRecord(dir)
	require.NoError(t, err)
	return rec
}

// shimOf returns the shim's identity recorded in attempt directory dir.
func shimOf(t *testing.T, dir string) shim.ProcInfo {
	t.Helper()
	s := recorded(t, dir).Shim
	require.NotNil(t, s, "the shim of %s recorded no identity", dir)
	return *s
}

// childOf returns the child's identity recorded in attempt directory dir.
func childOf(t *testing.T, dir string) shim.ProcInfo {
	t.Helper()
	c := recorded(t, dir).Child
	require.NotNil(t, c, "the shim of %s recorded no child", dir)
	return *c
}
