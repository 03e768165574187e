package shell_test

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/shell"
)

// A command stopped by its context takes what it started with it: the
// background job of the line is killed with the shell.
func TestCommandStopsItsWholeGroup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := shell.Command(ctx, "sleep 30 & echo $!; wait", time.Second)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "read the background job's pid")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	started, err := shim.StartTime(pid)
	require.NoError(t, err)
	job := shim.ProcInfo{PID: pid, StartTime: started}
	cancel()
	require.Error(t, cmd.Wait())
	// Alive counts a zombie as gone: the job's reaper may take its time.
	require.Eventually(t, func() bool { return !shim.Alive(job) }, 10*time.Second, 5*time.Millisecond,
		"the background job %d outlived its stopped command", pid)
}

// A line that exits while a process it started still holds its output
// returns, after the grace, with exec.ErrWaitDelay.
func TestCommandWaitsOnlyTheGraceForItsOutput(t *testing.T) {
	t.Parallel()
	cmd := shell.Command(t.Context(), "sleep 30 & exit 0", 50*time.Millisecond)
	cmd.Stdout = &bytes.Buffer{}
	err := cmd.Run()
	require.ErrorIs(t, err, exec.ErrWaitDelay)
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL), "kill what the line left running")
}
