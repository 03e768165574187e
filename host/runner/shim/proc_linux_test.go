package shim_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// These tests read /proc, which only Linux has.

func TestParseStat(t *testing.T) {
	t.Parallel()
	tail := " 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654321 1000 100"
	for _, tc := range []struct{ name, comm string }{
		{"plain", "sleep"},
		{"spaces", "my prog"},
		{"parentheses", "a) S 1 2 3 (b"},
		{"trailing paren", "x)"},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			state, ppid, pgrp, start, err := shim.ParseStat([]byte("77 (" + tc.comm + ") R" + tail + "\n"))
			require.NoError(t, err)
			require.Equal(t, byte('R'), state)
			require.Equal(t, 1, ppid)
			require.Equal(t, 4242, pgrp)
			require.Equal(t, uint64(987654321), start)
		})
	}
	for _, bad := range []string{"", "77 sleep R 1", "77 (sleep) R 1 2 3", "77 (sleep) R 1 x 2" + tail} {
		_, _, _, _, err := shim.ParseStat([]byte(bad))
		require.Error(t, err, "%q", bad)
	}
}

func TestAliveOddCommandName(t *testing.T) {
	t.Parallel()
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "x) R 1 (y z")
	require.NoError(t, os.Symlink(sleep, link))
	_, info := startSleep(t, link)
	b, err := os.ReadFile("/proc/" + strconv.Itoa(info.PID) + "/stat")
	require.NoError(t, err)
	require.Contains(t, string(b), "(x) R 1 (y z)", "the command name holds ')' and spaces")
	require.True(t, shim.Alive(info))
}

func TestLaunchDetaches(t *testing.T) {
	t.Parallel()
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	p, err := shim.Launch(sleep, []string{"30"}, []string{"FLOWGATE_LAUNCH_TEST=1"})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = p.Kill()
		_, _ = p.Wait()
	})
	dir := "/proc/" + strconv.Itoa(p.Pid)
	stat, err := os.ReadFile(dir + "/stat")
	require.NoError(t, err)
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	require.Equal(t, strconv.Itoa(p.Pid), f[6-3], "session id: the process leads a new session")
	require.Equal(t, strconv.Itoa(p.Pid), f[5-3], "process group id")
	for fd := range 3 {
		target, err := os.Readlink(dir + "/fd/" + strconv.Itoa(fd))
		require.NoError(t, err)
		require.Equal(t, os.DevNull, target, "fd %d", fd)
	}
	env, err := os.ReadFile(dir + "/environ")
	require.NoError(t, err)
	require.Equal(t, "FLOWGATE_LAUNCH_TEST=1\x00", string(env))

	_, err = shim.Launch(filepath.Join(t.TempDir(), "missing"), nil, nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
}
