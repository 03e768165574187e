package shim_test

import (
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
)

func self(t *testing.T) shim.ProcInfo {
	t.Helper()
	st, err := shim.StartTime(os.Getpid())
	require.NoError(t, err)
	require.NotZero(t, st)
	return shim.ProcInfo{PID: os.Getpid(), StartTime: st}
}

func TestAliveSelf(t *testing.T) {
	t.Parallel()
	me := self(t)
	require.True(t, shim.Alive(me))
	other := me
	other.StartTime++
	require.False(t, shim.Alive(other), "same pid, other start time: a reused pid")
	require.False(t, shim.Alive(shim.ProcInfo{}))
	require.False(t, shim.Alive(shim.ProcInfo{PID: -1}))
}

func TestStartTimeOfMissingPid(t *testing.T) {
	t.Parallel()
	_, err := shim.StartTime(1 << 30) // above any pid_max
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// startSleep starts "sleep 30" in a process group of its own and returns
// it with its identity. The process is killed and reaped at cleanup.
func startSleep(t *testing.T, name string) (*exec.Cmd, shim.ProcInfo) {
	t.Helper()
	cmd := exec.Command(name, "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	st, err := shim.StartTime(cmd.Process.Pid)
	require.NoError(t, err)
	return cmd, shim.ProcInfo{PID: cmd.Process.Pid, StartTime: st, PGID: cmd.Process.Pid}
}

func TestAliveZombieAndReaped(t *testing.T) {
	t.Parallel()
	cmd, info := startSleep(t, "sleep")
	require.True(t, shim.Alive(info))
	require.NoError(t, cmd.Process.Kill())
	require.Eventually(t, func() bool { return !shim.Alive(info) }, 30*time.Second, 5*time.Millisecond,
		"a killed, unreaped process (a zombie) is not alive")
	_, err := shim.StartTime(info.PID)
	require.NoError(t, err, "the zombie still has its /proc entry")
	_ = cmd.Wait()
	require.False(t, shim.Alive(info), "a reaped process is not alive")
}

func TestSignal(t *testing.T) {
	t.Parallel()
	cmd, info := startSleep(t, "sleep")

	wrong := info
	wrong.StartTime++
	require.ErrorIs(t, shim.Signal(wrong, syscall.SIGKILL), shim.ErrGone)
	require.True(t, shim.Alive(info), "a mismatched identity must not be signalled")
	require.ErrorIs(t, shim.Signal(shim.ProcInfo{}, syscall.SIGKILL), shim.ErrGone)

	require.NoError(t, shim.Signal(info, syscall.SIGTERM))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, syscall.SIGTERM, exit.Sys().(syscall.WaitStatus).Signal())
	require.ErrorIs(t, shim.Signal(info, syscall.SIGTERM), shim.ErrGone, "a reaped process")
}

func TestSignalGroup(t *testing.T) {
	t.Parallel()
	for _, pgid := range []int{-3, 0, 1} {
		err := shim.SignalGroup(pgid, syscall.SIGKILL)
		require.Error(t, err)
		require.Contains(t, err.Error(), "refusing")
	}
	cmd, info := startSleep(t, "sleep")
	require.NoError(t, shim.SignalGroup(info.PGID, syscall.SIGKILL))
	_ = cmd.Wait()
	require.ErrorIs(t, shim.SignalGroup(info.PGID, syscall.SIGKILL), shim.ErrGone)
}
