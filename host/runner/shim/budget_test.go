package shim_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
)

func TestShimTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	// A grandchild that ignores SIGTERM, so only the group SIGKILL after
	// the grace ends it.
	a := start(t, shim.Spec{
		Shell:   `(trap '' TERM; exec sleep 30) & echo $! > grandchild; wait`,
		Cwd:     ".",
		Timeout: dur(500 * time.Millisecond),
		Grace:   dur(200 * time.Millisecond),
	})
	st := a.wait(t)
	require.Equal(t, "timeout", st.Reason)
	require.Equal(t, "timed out after 500ms", st.Error)
	require.Equal(t, 143, st.ExitCode, "128 + SIGTERM, as a shell reports it")
	require.Equal(t, "SIGTERM", st.Signal, "sh itself dies of SIGTERM")
	require.GreaterOrEqual(t, st.EndedAt.Sub(st.StartedAt), 500*time.Millisecond)
	a.requireGroupGone(t)
	gc, err := strconv.Atoi(strings.TrimSpace(a.read(t, "grandchild")))
	require.NoError(t, err)
	require.ErrorIs(t, syscall.Kill(gc, 0), syscall.ESRCH, "grandchild %d survived", gc)
}

func TestShimKillsStragglers(t *testing.T) {
	t.Parallel()
	// The child exits at once, leaving a background process in its group.
	a := start(t, shim.Spec{Shell: `sleep 30 & exit 0`})
	st := a.wait(t)
	require.Equal(t, 0, st.ExitCode)
	require.Empty(t, st.Reason)
	a.requireGroupGone(t)
}

// Processes orphaned while the child runs are re-parented to the shim,
// which reaps them as they exit instead of collecting zombies.
func TestShimReapsOrphansWhileRunning(t *testing.T) {
	t.Parallel()
	a := start(t, shim.Spec{
		Shell: `for i in 1 2 3; do (true &); done; sleep 0.5; cat /proc/$PPID/task/*/children; echo " $$"`,
	})
	require.Equal(t, 0, a.wait(t).ExitCode)
	out := strings.Fields(a.read(t, shim.StdoutFile))
	require.Len(t, out, 2, "the shim's children, then the child's pid: %q", out)
	require.Equal(t, out[1], out[0], "the shim has children other than its child")
}

func TestShimDeadline(t *testing.T) {
	t.Parallel()
	t.Run("passes while running", func(t *testing.T) {
		t.Parallel()
		// Far enough ahead that the child surely starts first.
		a := start(t, shim.Spec{Shell: "sleep 30", Deadline: time.Now().Add(1500 * time.Millisecond)})
		st := a.wait(t)
		require.Equal(t, "budget-exceeded", st.Reason)
		require.Contains(t, st.Error, "max budget exceeded")
		require.Equal(t, "SIGTERM", st.Signal)
		a.requireGroupGone(t)
	})
	t.Run("already passed: never starts", func(t *testing.T) {
		t.Parallel()
		a := start(t, shim.Spec{Shell: "touch ran", Cwd: ".", Deadline: time.Now().Add(-time.Second)})
		st := a.wait(t)
		require.Equal(t, "budget-exceeded", st.Reason)
		require.Equal(t, -1, st.ExitCode)
		require.Empty(t, st.Signal)
		require.NoFileExists(t, a.path("ran"))
		require.Nil(t, a.record(t).Child, "no child identity: the child never started")
	})
}

func TestShimNoProgress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		shell  string
		before string // what an earlier attempt left in the progress file
		limit  time.Duration
		reason string
	}{
		{"stalls after the first progress", `echo '{"fraction":0.1}' >> "$FLOWGATE_PROGRESS"; sleep 5`, "", 300 * time.Millisecond, "no-progress"},
		{"never reports progress", `sleep 1`, "", 200 * time.Millisecond, ""},
		{"an earlier attempt's progress does not arm it", `sleep 1`, `{"fraction":0.5}` + "\n", 200 * time.Millisecond, ""},
		{"steady progress", `for i in 1 2 3 4 5 6 7 8 9 10; do echo '{}' >> "$FLOWGATE_PROGRESS"; sleep 0.1; done`, "", 600 * time.Millisecond, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			progress := filepath.Join(t.TempDir(), "progress.jsonl")
			if tc.before != "" {
				require.NoError(t, os.WriteFile(progress, []byte(tc.before), 0o600))
			}
			a := start(t, shim.Spec{Shell: tc.shell, ProgressPath: progress, NoProgress: dur(tc.limit), Grace: dur(time.Second)})
			st := a.wait(t)
			require.Equal(t, tc.reason, st.Reason)
			if tc.reason == "" {
				require.Equal(t, 0, st.ExitCode)
				return
			}
			require.Equal(t, "no progress for "+tc.limit.String(), st.Error)
			require.Equal(t, "SIGTERM", st.Signal)
			a.requireGroupGone(t)
		})
	}
}

func TestShimCancel(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	for _, tc := range []struct {
		name   string
		shell  string
		sig    syscall.Signal
		killed string
	}{
		{"SIGTERM", `touch ready; sleep 30`, syscall.SIGTERM, "SIGTERM"},
		{"SIGINT", `touch ready; sleep 30`, syscall.SIGINT, "SIGTERM"},
		{"child ignores SIGTERM", `trap '' TERM; touch ready; while :; do sleep 0.05; done`, syscall.SIGTERM, "SIGKILL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := start(t, shim.Spec{Shell: tc.shell, Cwd: ".", Grace: dur(grace)})
			a.waitFile(t, "ready")
			sent := time.Now()
			require.NoError(t, a.proc.Signal(tc.sig))
			st := a.wait(t)
			require.Equal(t, "cancelled", st.Reason)
			require.Equal(t, "cancelled by "+map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[tc.sig], st.Error)
			require.Equal(t, shim.SignalExit(map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}[tc.killed]), st.ExitCode)
			require.Equal(t, tc.killed, st.Signal)
			if tc.killed == "SIGKILL" {
				require.GreaterOrEqual(t, time.Since(sent), grace, "SIGKILL came before the grace was over")
			}
			a.requireGroupGone(t)
		})
	}
}

// The shim hands the output file to the child and never copies it, so
// its memory stays flat however much the child writes.
func TestShimLargeOutputKeepsMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1 GiB")
	}
	t.Parallel()
	const size = 1 << 30
	a := start(t, shim.Spec{Shell: "head -c " + strconv.Itoa(size) + " /dev/zero"})
	st := a.wait(t)
	t.Cleanup(func() { _ = os.Remove(a.path(shim.StdoutFile)) })
	require.Equal(t, 0, st.ExitCode)
	fi, err := os.Stat(a.path(shim.StdoutFile))
	require.NoError(t, err)
	require.Equal(t, int64(size), fi.Size())
	// Maxrss (KiB) covers the shim and the children it reaped.
	maxRSS := a.state.SysUsage().(*syscall.Rusage).Maxrss * 1024
	t.Logf("shim max RSS: %d MiB", maxRSS>>20)
	require.Less(t, maxRSS, int64(50<<20))
}
