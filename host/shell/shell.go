package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Command returns a command that runs line with /bin/sh -c in a process
// group of its own. When ctx ends before the command does, the whole
// group is killed with SIGKILL. Once the shell has exited, Wait waits at
// most grace for the command's output pipes to close
// (exec.Cmd.WaitDelay): a process the line left running that still holds
// one makes Run return an error matching exec.ErrWaitDelay, with the
// shell's own exit otherwise a success. Its Env is BaseEnv of the
// gateway's environment, to which the caller appends what the command is
// told; the caller sets Stdin, Stdout, Stderr and Dir as on any exec.Cmd.
func Command(ctx context.Context, line string, grace time.Duration) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return os.ErrProcessDone
	}
	cmd.WaitDelay = grace
	cmd.Env = BaseEnv(os.Environ())
	return cmd
}
