package main_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// buildFlowgate builds the flowgate binary the way users get it, with
// the lean flowgate-shim next to it, and returns the flowgate binary.
func buildFlowgate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", dir, ".", "../flowgate-shim").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return filepath.Join(dir, "flowgate")
}

// e2eDirs makes a home (short: unix socket paths are limited), a work
// directory, and a gateway log that is printed if the test fails.
func e2eDirs(t *testing.T) (home, work string, logf *os.File) {
	t.Helper()
	home, err := os.MkdirTemp("", "fge2e")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	work = t.TempDir()
	logf, err = os.Create(filepath.Join(work, "gateway.log"))
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("gateway log:\n%s", b)
		}
		logf.Close()
	})
	return home, work, logf
}

// gatewayProc is a flowgate gateway running as a real subprocess.
type gatewayProc struct {
	cmd  *exec.Cmd
	home string
	done chan struct{}
}

// startGateway starts `flowgate gateway` on home, with extra gateway
// flags, and waits, bounded, until its socket answers.
func startGateway(t *testing.T, bin, home string, logf *os.File, extra ...string) *gatewayProc {
	t.Helper()
	return startGatewayEnv(t, bin, home, logf, nil, extra...)
}

// startGatewayEnv is startGateway with env as the gateway's whole
// environment (nil: this process's).
func startGatewayEnv(t *testing.T, bin, home string, logf *os.File, env []string, extra ...string) *gatewayProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"gateway", "--home", home, "--log-level", "debug"}, extra...)...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	g := &gatewayProc{cmd: cmd, home: home, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(g.done) }()
	polltest.Until(t, "", func() (bool, string) {
		c, err := api.DialRemote(gateway.SocketPath(home))
		if err == nil {
			c.Close()
			return true, ""
		}
		select {
		case <-g.done:
			t.Fatalf("gateway on %s exited at start: %v", home, cmd.ProcessState)
		default:
		}
		return false, fmt.Sprintf("the socket of the gateway on %s did not answer: %v", home, err)
	}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))
	return g
}

// kill SIGKILLs the gateway and waits for it to exit.
func (g *gatewayProc) kill(t *testing.T) {
	t.Helper()
	g.signal(t, syscall.SIGKILL)
	<-g.done
}

// stop asks the gateway to stop (SIGTERM, as systemd does) and waits,
// bounded, until it has exited; g.cmd.ProcessState says how.
func (g *gatewayProc) stop(t *testing.T) {
	t.Helper()
	g.signal(t, syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the gateway on %s did not stop within 30s of SIGTERM", g.home)
	}
}

// signal sends sig to the gateway process.
func (g *gatewayProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, g.cmd.Process.Signal(sig))
}

// reap kills the gateway, paused or not, unless it has exited, and
// waits for it: a cleanup, so it reports nothing.
func (g *gatewayProc) reap() {
	select {
	case <-g.done:
	default:
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// flowgate runs the flowgate binary bin with args, fails the test if it
// fails, and returns what it printed, stdout and stderr together.
func flowgate(t testing.TB, bin string, args ...string) string {
	t.Helper()
	return flowgateEnv(t, nil, bin, args...)
}

// flowgateEnv is flowgate with env as the command's whole environment
// (nil: this process's).
func flowgateEnv(t testing.TB, env []string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "flowgate %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// kinds of task in the end-to-end run, by index modulo 6.
const (
	kindOK = iota
	kindProgress
	kindFail
	kindTimeout
	kindCancel
	kindRetry
	kinds
)

// TestGatewaySurvivesSIGKILL runs 50 tasks of every kind through a real
// gateway process, SIGKILLs the gateway at random moments ten times,
// restarts it each time, and then checks that every task ended as its
// command implies, ran exactly once (twice for the task whose first
// attempt asks for a retry), kept its milestones exactly once, and agrees
// with its mirrored flow.
func TestGatewaySurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	runs := filepath.Join(work, "runs.log")

	g := startGateway(t, bin, home, logf)
	ctx := context.Background()
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)

	record := `echo "$FLOWGATE_TASK_ID $FLOWGATE_ATTEMPT" >>` + runs + `; `
	kindOf := map[string]int{}
	var ids []string
	for i := 0; i < 50; i++ {
		k := i % kinds
		in := apitype.CreateTaskInput{OwnerKey: "e2e", Label: fmt.Sprintf("task-%02d", i), Spec: sdk.TaskSpec{Cwd: work}}
		switch k {
		case kindOK:
			in.Spec.Shell = record + fmt.Sprintf("sleep 0.%d; echo ok", 2+i%7)
		case kindProgress:
			in.Spec.Shell = record + `p=$FLOWGATE_PROGRESS
				echo '{"fraction":0.25,"phase":"a"}' >>$p; sleep 0.3
				echo '{"milestone":"first"}' >>$p; sleep 0.3
				echo 'garbage' >>$p; echo '{"fraction":0.75,"phase":"b"}' >>$p; sleep 0.3
				echo '{"milestone":"second"}' >>$p; echo '{"fraction":1,"phase":"done"}' >>$p`
		case kindFail:
			in.Spec.Shell = record + "sleep 0.3; echo failing >&2; exit 3"
		case kindTimeout:
			in.Spec.Shell = record + "sleep 5"
			in.Spec.Timeout = sdk.Duration(time.Second)
		case kindCancel:
			in.Spec.Shell = record + "sleep 30"
		case kindRetry:
			mark := filepath.Join(work, fmt.Sprintf("mark-%d", i))
			in.Spec.Shell = record + fmt.Sprintf("if [ ! -e %s ]; then touch %s; exit 75; fi; echo second time lucky", mark, mark)
			in.Spec.Retry = &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(200 * time.Millisecond)}
		}
		task, created, err := c.RunTask(ctx, in)
		require.NoError(t, err)
		require.True(t, created)
		ids = append(ids, task.ID)
		kindOf[task.ID] = k
	}
	c.Close()

	for round := 0; round < 10; round++ {
		time.Sleep(time.Duration(100+rand.IntN(600)) * time.Millisecond) // a random moment to crash, not a wait for a condition
		g.kill(t)
		g = startGateway(t, bin, home, logf)
		if round == 3 {
			c, err := api.DialRemote(gateway.SocketPath(home))
			require.NoError(t, err)
			for _, id := range ids {
				if kindOf[id] == kindCancel {
					_, err := c.CancelTask(ctx, id)
					if err != nil {
						require.ErrorIs(t, err, sdk.ErrTerminal)
					}
				}
			}
			c.Close()
		}
	}

	c, err = api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	var tasks []*stored.Task
	polltest.Until(t, "", func() (bool, string) {
		page, err := c.ListTasks(ctx, apitype.TaskFilter{OwnerKey: "e2e"})
		require.NoError(t, err)
		tasks = page.Tasks
		active := 0
		for _, task := range tasks {
			if task.Status.Active() {
				active++
			}
		}
		return active == 0, fmt.Sprintf("%d tasks still active", active)
	}, polltest.Within(2*time.Minute), polltest.Every(100*time.Millisecond))
	require.Len(t, tasks, 50)

	b, err := os.ReadFile(runs)
	require.NoError(t, err)
	ran := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		id, _, _ := strings.Cut(line, " ")
		ran[id]++
	}

	for _, task := range tasks {
		k := kindOf[task.ID]
		name := fmt.Sprintf("%s (kind %d, %s)", task.Label, k, task.ID)
		want := map[int]sdk.TaskStatus{kindOK: sdk.TaskSucceeded, kindProgress: sdk.TaskSucceeded, kindFail: sdk.TaskFailed,
			kindTimeout: sdk.TaskTimedOut, kindCancel: sdk.TaskCancelled, kindRetry: sdk.TaskSucceeded}[k]
		require.Equal(t, want, task.Status, "%s: errors %v", name, task.Errors)
		switch k {
		case kindOK, kindProgress, kindRetry:
			require.NotNil(t, task.ExitCode, name)
			require.Equal(t, 0, *task.ExitCode, name)
		case kindFail:
			require.Equal(t, 3, *task.ExitCode, name)
		case kindTimeout:
			require.Equal(t, "timeout", task.Reason, name)
		case kindCancel:
			require.Equal(t, "cancelled", task.Reason, name)
		}
		switch k {
		case kindRetry:
			require.Equal(t, 2, ran[task.ID], "%s ran %d times", name, ran[task.ID])
		case kindCancel:
			require.LessOrEqual(t, ran[task.ID], 1, "%s ran %d times", name, ran[task.ID])
		default:
			require.Equal(t, 1, ran[task.ID], "%s ran %d times", name, ran[task.ID])
		}
		if k == kindProgress {
			require.Len(t, task.Milestones, 2, name)
			require.Equal(t, "first", task.Milestones[0].Name, name)
			require.Equal(t, int64(1), task.Milestones[0].Seq, name)
			require.Equal(t, "second", task.Milestones[1].Name, name)
			require.Equal(t, int64(2), task.Milestones[1].Seq, name)
			require.Equal(t, 1, task.ProgressErrors, name)
			require.NotNil(t, task.Progress, name)
			require.Equal(t, "done", task.Progress.Phase, name)
		}

		v, err := c.ViewFlow(ctx, task.FlowID)
		require.NoError(t, err, name)
		require.Equal(t, sdk.SyncTaskMirrored, v.SyncMode, name)
		wantFlow := map[sdk.TaskStatus]sdk.FlowStatus{sdk.TaskSucceeded: sdk.FlowSucceeded, sdk.TaskFailed: sdk.FlowFailed,
			sdk.TaskTimedOut: sdk.FlowFailed, sdk.TaskCancelled: sdk.FlowCancelled}[task.Status]
		require.Equal(t, wantFlow, v.Status, "%s: mirrored flow disagrees with its task", name)
		require.Len(t, v.Tasks, 1, name)
		require.True(t, v.EndedAt.Equal(task.EndedAt), name)
	}

	g.kill(t)
}

// TestCtrlCLeavesTheTaskRunning interrupts `flowgate tasks run` (which
// hosts a gateway in-process, none running) and checks that the task
// keeps running under its shim and is settled by the next command.
func TestCtrlCLeavesTheTaskRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, err := os.MkdirTemp("", "fgint")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	marker := filepath.Join(t.TempDir(), "finished")

	cmd := exec.Command(bin, "--home", home, "tasks", "run", "--", "sh", "-c", "echo started; sleep 1; touch "+marker)
	var stderr strings.Builder
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	buf := make([]byte, len("started\n"))
	_, err = io.ReadFull(stdout, buf) // the task is running once it printed
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 130, ee.ExitCode())
	require.Contains(t, stderr.String(), "keeps running")
	require.Contains(t, stderr.String(), "flowgate tasks cancel")

	// No gateway runs now: each command settles what ended meanwhile.
	polltest.Until(t, "", func() (bool, string) {
		out, err := exec.Command(bin, "--home", home, "tasks", "list", "--json").Output()
		require.NoError(t, err)
		return strings.Contains(string(out), `"status": "succeeded"`), "the task was not settled after its follower left: " + string(out)
	}, polltest.Within(20*time.Second), polltest.Every(100*time.Millisecond))
	_, err = os.Stat(marker)
	require.NoError(t, err, "the task ran to its end")
}

// TestPluginEventsSurviveGatewaySIGKILL runs the hello controller under a
// real gateway, SIGKILLs the gateway while events are pending, checks the
// plugin process exits within a second, and that the restarted gateway
// delivers the pending events so every flow finishes with three tasks.
func TestPluginEventsSurviveGatewaySIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	hello := filepath.Join(t.TempDir(), "hello")
	out, err := exec.Command("go", "build", "-o", hello, "../../examples/controllers/hello").CombinedOutput()
	require.NoError(t, err, "%s", out)
	home, work, logf := e2eDirs(t)
	cfg := filepath.Join(work, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("plugins:\n  - name: hello\n    path: "+hello+"\n"), 0o600))

	g := startGateway(t, bin, home, logf, "--config", cfg)
	ctx := context.Background()
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	var pid int
	polltest.Until(t, "", func() (bool, string) {
		ps, err := c.Plugins(ctx)
		require.NoError(t, err)
		for _, p := range ps {
			if p.Name == "hello" && p.State == "running" {
				pid = p.PID
			}
		}
		return pid != 0, fmt.Sprintf("hello never ran: %+v", ps)
	}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))
	var ids []string
	for i := 0; i < 5; i++ {
		f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: "hello", Goal: fmt.Sprint("flow ", i), OwnerKey: "e2e"})
		require.NoError(t, err)
		ids = append(ids, f.ID)
	}
	c.Close()
	g.kill(t) // events are pending: five flow.started at least

	// The plugin notices its parent is gone and exits within a second.
	gone := time.Now().Add(time.Second)
	for alive(pid) {
		require.True(t, time.Now().Before(gone), "plugin pid %d outlived the gateway by more than a second", pid)
		time.Sleep(10 * time.Millisecond)
	}

	g = startGateway(t, bin, home, logf, "--config", cfg)
	defer g.kill(t)
	c, err = api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	for _, id := range ids {
		var v apitype.FlowView
		polltest.Until(t, "", func() (bool, string) {
			var err error
			v, err = c.ViewFlow(ctx, id)
			require.NoError(t, err)
			return v.Status.Terminal(), fmt.Sprintf("flow %s is still %s", id, v.Status)
		}, polltest.Within(60*time.Second), polltest.Every(50*time.Millisecond))
		require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
		require.Len(t, v.Tasks, 3)
		require.JSONEq(t, `{"results":["hello","from","flowgate"]}`, string(v.State))
	}
}

// alive reports whether pid runs and is not a zombie.
// runDetached starts workflow wf with pipeline run --detach against home's
// gateway and returns the flow's id.
func runDetached(t *testing.T, bin, home, wf string) string {
	t.Helper()
	out := flowgate(t, bin, "--home", home, "pipeline", "run", "--detach", wf)
	return strings.Fields(out)[2]
}

// viewFlow reads flow id through home's gateway socket.
func viewFlow(t *testing.T, home, id string) apitype.FlowView {
	t.Helper()
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	v, err := c.ViewFlow(context.Background(), id)
	require.NoError(t, err)
	return v
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// TestPipelineSurvivesGatewaySIGKILL runs a workflow with an approval gate
// under a real gateway, SIGKILLs the gateway once during a step and once
// while the flow waits at the gate, approves, and checks that the flow
// succeeds with every step run exactly once.
func TestPipelineSurvivesGatewaySIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	runs := filepath.Join(work, "runs")
	wf := filepath.Join(work, "durable.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: durable
steps:
  - id: one
    run: echo one >> `+runs+`; sleep 1; echo first done
  - id: gate
    approval: Go on?
  - id: two
    run: echo two >> `+runs+`
`), 0o600))

	g := startGateway(t, bin, home, logf)
	flowID := runDetached(t, bin, home, wf)
	view := func() apitype.FlowView { return viewFlow(t, home, flowID) }
	until := func(what string, cond func(apitype.FlowView) bool) {
		polltest.Until(t, "", func() (bool, string) {
			v := view()
			return cond(v), fmt.Sprintf("waiting for %s: flow %s %s", what, v.Status, v.BlockedSummary)
		}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	}
	until("step one to run", func(v apitype.FlowView) bool {
		return len(v.Tasks) == 1 && v.Tasks[0].Status == sdk.TaskRunning
	})
	g.kill(t) // mid-step
	g = startGateway(t, bin, home, logf)
	until("the gate", func(v apitype.FlowView) bool { return v.Status == sdk.FlowWaiting })
	g.kill(t) // while waiting
	g = startGateway(t, bin, home, logf)
	defer g.kill(t)
	require.Equal(t, sdk.FlowWaiting, view().Status, "a gate waits across restarts")

	flowgate(t, bin, "--home", home, "pipeline", "resume", "--id", flowID, "--approve", "yes", "--by", "tester")
	v := view()
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
	require.Len(t, v.Tasks, 2)
	b, err := os.ReadFile(runs)
	require.NoError(t, err)
	require.Equal(t, "one\ntwo\n", string(b), "each step ran exactly once")
}
