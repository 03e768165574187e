package shim_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// helperWarmEnv makes the test binary run as a warm shim; with
// helperSyncLogEnv, one that logs its syncs to the file it names.
const (
	helperWarmEnv    = "FLOWGATE_SHIM_TEST_WARM"
	helperSyncLogEnv = "FLOWGATE_SHIM_TEST_SYNC_LOG"
)

func TestWarmShimHelper(t *testing.T) {
	if os.Getenv(helperWarmEnv) != "1" {
		t.Skip("runs only as the warm shim of another test")
	}
	if log := os.Getenv(helperSyncLogEnv); log != "" {
		shim.LogSyncsTo(log)
	}
	os.Exit(shim.MainWarm())
}

// startWarm starts the test binary as a warm shim, with env added to its
// environment.
func startWarm(t *testing.T, env ...string) *shim.Warm {
	t.Helper()
	w, err := shim.StartWarm(os.Args[0], []string{"-test.run=^TestWarmShimHelper$"}, append(append(os.Environ(), helperWarmEnv+"=1",
		// Under -race, a process sleeps 1s at exit by default.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")), env...))
	require.NoError(t, err)
	return w
}

// A warm shim handed an attempt is its shim: it claims the attempt under
// its own process, runs the spec with the environment it was handed (not
// the one it started with), and records how it ended.
func TestWarmShimRunsTheAttemptItIsHanded(t *testing.T) {
	t.Parallel()
	w := startWarm(t)
	dir := handWarm(t, w, "echo \"$HANDED,$"+helperWarmEnv+"\"", "HANDED=yes")
	require.Equal(t, 0, waitEnded(t, w))
	w.Discard()
	waitExited(t, w)

	rec, err := shim.ReadRecord(dir)
	require.NoError(t, err)
	require.NotNil(t, rec.Status, "the warm shim recorded no status")
	require.Equal(t, 0, rec.Status.ExitCode)
	out, err := os.ReadFile(filepath.Join(dir, shim.StdoutFile))
	require.NoError(t, err)
	require.Equal(t, "yes,\n", string(out))
	require.Equal(t, w.Process().Pid, rec.Shim.PID, "the record names the warm shim")
}

// A warm shim runs the attempts it is handed one after another, each
// under the same process and with only the environment handed with it:
// nothing of the attempt before leaks into the next, not its variables,
// nor a SIGTERM that reached the shim after that attempt's end.
func TestWarmShimRunsOneAttemptAfterAnother(t *testing.T) {
	t.Parallel()
	w := startWarm(t)
	first := handWarm(t, w, "echo \"$FIRST,$SECOND\"", "FIRST=1")
	require.Equal(t, 0, waitEnded(t, w))
	require.NoError(t, w.Process().Signal(syscall.SIGTERM), "a late cancel of the first attempt")
	second := handWarm(t, w, "echo \"$FIRST,$SECOND\"", "SECOND=2")
	require.Equal(t, 0, waitEnded(t, w))
	w.Discard()
	waitExited(t, w)

	for dir, want := range map[string]string{first: "1,\n", second: ",2\n"} {
		rec, err := shim.ReadRecord(dir)
		require.NoError(t, err)
		require.NotNil(t, rec.Status)
		require.Equal(t, 0, rec.Status.ExitCode, "the second attempt ran to its end: %+v", rec.Status)
		require.Equal(t, w.Process().Pid, rec.Shim.PID, "both attempts ran under one shim")
		out, err := os.ReadFile(filepath.Join(dir, shim.StdoutFile))
		require.NoError(t, err)
		require.Equal(t, want, string(out))
	}
}

// handWarm hands w a new attempt of the shell command sh with PATH and
// env as its environment, and returns its directory.
func handWarm(t *testing.T, w *shim.Warm, sh string, env ...string) string {
	t.Helper()
	return handWarmSpec(t, w, shim.Spec{Shell: sh}, env...)
}

// handWarmSpec is handWarm with the whole spec.
func handWarmSpec(t *testing.T, w *shim.Warm, spec shim.Spec, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, shim.Prepare(dir))
	entry, err := shim.SpecEntry(spec)
	require.NoError(t, err)
	p, err := w.Hand(dir, append([]string{"PATH=" + os.Getenv("PATH"), entry}, env...))
	require.NoError(t, err)
	require.Equal(t, w.Process().Pid, p.Pid)
	return dir
}

// waitEnded waits for w to record the end of the attempt it was handed
// and returns its exit code.
func waitEnded(t *testing.T, w *shim.Warm) int {
	t.Helper()
	select {
	case code := <-w.Ended():
		return code
	case <-w.Exited():
		t.Fatalf("the warm shim %d exited before it recorded its attempt's end", w.Process().Pid)
	case <-time.After(waitLimit):
		t.Fatalf("the warm shim %d recorded no end within %s", w.Process().Pid, waitLimit)
	}
	return 0
}

// waitExited waits for w to exit.
func waitExited(t *testing.T, w *shim.Warm) {
	t.Helper()
	select {
	case <-w.Exited():
	case <-time.After(waitLimit):
		_ = w.Process().Kill()
		t.Fatalf("the warm shim %d did not exit within %s of its pipe closing", w.Process().Pid, waitLimit)
	}
}

// A warm shim syncs neither the claim of an attempt started in its own
// boot nor the end of an attempt its gateway recorded, which the gateway
// says by handing it the next one. It syncs the claim of an attempt
// started with no boot, and the end of its last attempt, which the
// gateway may not have recorded, before it exits.
func TestWarmShimSyncsOnlyWhatNothingElseHolds(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "syncs")
	w := startWarm(t, helperSyncLogEnv+"="+log)
	first := handWarmSpec(t, w, shim.Spec{Shell: "true", Boot: shim.BootID()})
	require.Equal(t, 0, waitEnded(t, w))
	second := handWarmSpec(t, w, shim.Spec{Shell: "true"})
	require.Equal(t, 0, waitEnded(t, w))
	w.Discard()
	waitExited(t, w)

	b, err := os.ReadFile(log)
	require.NoError(t, err)
	record := filepath.Join(second, shim.RecordFile)
	require.Equal(t, record+"\n"+record+"\n", string(b),
		"only the second attempt's claim and end are synced, not %s's", first)
	for _, dir := range []string{first, second} {
		rec, err := shim.ReadRecord(dir)
		require.NoError(t, err)
		require.NotNil(t, rec.Status, "the end of %s is recorded", dir)
	}
}

// A shim started for its attempt alone syncs the attempt's end before it
// exits, since nothing tells it that the gateway recorded that end; its
// claim it syncs unless the start recorded the boot it runs in.
func TestLoneShimSyncsItsEndBeforeItExits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, boot string
		syncs      int
	}{{"this boot", shim.BootID(), 1}, {"no boot", "", 2}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "syncs")
			a := start(t, shim.Spec{Shell: "true", Boot: c.boot}, helperSyncLogEnv+"="+log)
			require.Equal(t, 0, a.wait(t).ExitCode)
			b, err := os.ReadFile(log)
			require.NoError(t, err)
			require.Equal(t, strings.Repeat(a.path(shim.RecordFile)+"\n", c.syncs), string(b))
		})
	}
}

// A warm shim whose pipe closes with no attempt on it (the gateway
// stopped or died) exits: Discard, which closes the pipe and reaps the
// shim, returns.
func TestWarmShimWithNoAttemptExits(t *testing.T) {
	t.Parallel()
	w := startWarm(t)
	w.Discard()
	waitExited(t, w)
}
