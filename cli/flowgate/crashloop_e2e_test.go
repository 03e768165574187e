package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// crashSeedEnv replays a crash loop: set it to the seed a failed run
// logged.
const crashSeedEnv = "FLOWGATE_CRASH_SEED"

// crashOwner owns every task the crash loop runs.
const crashOwner = "crash"

// TestCrashLoop is the red team's crash loop, bounded: 30 rounds (5 with
// -short), each starting mixed work through the real CLI — tasks run
// --detach with an idempotency key, foreground tasks run with and without
// one, a pipeline every third round, a guarded flow update — and
// SIGKILLing the real gateway process at a random moment meanwhile, then
// starting it again. Every task appends its label to a ledger when it
// runs. At the end no label ran twice (no duplicated run), every task
// that was created ran and ended (none lost), and no command's exit code
// contradicts the recorded outcome (no wrong answer): 0 or the task's own
// code means the task exists and ended so, 1 means it was never created,
// 5 means the outcome is unknown. Commands with an idempotency key are
// retried blindly, as a script would, and must end with an answer. The
// kill points come from a seeded generator; the seed is logged.
func TestCrashLoop(t *testing.T) {
	rounds := 30
	if testing.Short() {
		rounds = 5
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "%s must be a number", crashSeedEnv)
	}
	t.Logf("crash loop seed %d (replay: %s=%d)", seed, crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	cl := &crashLoop{t: t, bin: bin, home: home, work: work, logf: logf, ledger: filepath.Join(work, "ledger")}
	wf := filepath.Join(work, "two.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: two
args:
  tag: {default: none}
steps:
  - id: one
    run: echo "step $LOBSTER_ARG_TAG-one" >> `+cl.ledger+`
  - id: two
    run: echo "step $LOBSTER_ARG_TAG-two" >> `+cl.ledger+`
`), 0o600))
	cl.startGateway()
	flowID := cl.createFlow()

	var results []crashResult
	for round := range rounds {
		code := func() int { return 3 * rng.IntN(2) } // a task exits 0 or 3
		jobs := []func() crashResult{
			cl.taskJob(fmt.Sprintf("r%02d-detach", round), true, true, 0),
			cl.taskJob(fmt.Sprintf("r%02d-run", round), false, false, code()),
			cl.taskJob(fmt.Sprintf("r%02d-runkey", round), false, true, code()),
			cl.updateJob(flowID, round),
		}
		if round%3 == 0 {
			jobs = append(jobs, cl.pipelineJob(fmt.Sprintf("r%02d-pipe", round), wf))
		}
		// Half the kills land while the commands submit, half while the
		// tasks run.
		killAfter := time.Duration(rng.IntN([]int{60, 500}[rng.IntN(2)])) * time.Millisecond
		out := make([]crashResult, len(jobs))
		var wg sync.WaitGroup
		for i, job := range jobs {
			wg.Go(func() { out[i] = job() })
		}
		time.Sleep(killAfter) // the random kill point, not a wait for a condition
		cl.kill()
		cl.startGateway()
		wg.Wait()
		for _, r := range out {
			require.Empty(t, r.failure, "round %d, %s (seed %d)", round, r.label, seed)
		}
		results = append(results, out...)
	}
	cl.settle()
	cl.check(results, seed)
	cl.kill()
}

// crashLoop is the harness: the binary, the home, the gateway process it
// kills and restarts, and the ledger every task appends to.
type crashLoop struct {
	t               *testing.T
	bin, home, work string
	ledger          string
	logf            *os.File
	gw              *exec.Cmd
	gwDone          chan struct{}
	mu              sync.Mutex // guards tries, retried and unknown
	tries           int
	retried         []string // why each blind retry was needed
	unknown         []string // what each run that ended unknown said
	restarted       int
}

// crashResult is what one command of the loop ended with.
type crashResult struct {
	kind, label string
	code        int
	// want is the task's exit code for a task command.
	want   int
	flowID string // a pipeline that answered
	stderr string
	// failure is set when the command answered wrongly on the spot.
	failure string
}

// cli runs the flowgate binary on the home, bounded, and returns its exit
// code and output. A command killed at the bound, or that could not run,
// has code -1 and says why on stderr. It is called from the jobs'
// goroutines, so it reports instead of failing the test.
func (cl *crashLoop) cli(args ...string) (code int, stdout, stderr string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cl.bin, append([]string{"--home", cl.home}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return -1, o.String(), fmt.Sprintf("flowgate %v ran for 90s: %s", args, e.String())
	case errors.As(err, &ee):
		return ee.ExitCode(), o.String(), e.String()
	case err != nil:
		return -1, o.String(), err.Error()
	}
	return 0, o.String(), e.String()
}

// startGateway starts `flowgate gateway` and waits, bounded, until it is
// the one answering on the socket. A command that found no gateway may
// host one itself meanwhile; the new process then exits, and it is
// started again once that one is gone.
func (cl *crashLoop) startGateway() {
	t := cl.t
	deadline := time.Now().Add(60 * time.Second)
	for {
		cmd := exec.Command(cl.bin, "gateway", "--home", cl.home)
		cmd.Stdout, cmd.Stderr = cl.logf, cl.logf
		require.NoError(t, cmd.Start())
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		for {
			if pid := cl.servingPID(); pid == cmd.Process.Pid {
				cl.gw, cl.gwDone = cmd, done
				return
			}
			select {
			case <-done:
			case <-time.After(20 * time.Millisecond):
				require.True(t, time.Now().Before(deadline), "the gateway did not start in 60s")
				continue
			}
			break
		}
		cl.restarted++
		for cl.servingPID() != 0 { // a command's own gateway serves: wait for it to go
			require.True(t, time.Now().Before(deadline), "a command's in-process gateway served for 60s")
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// servingPID is the pid of the gateway answering on the socket, 0 for
// none.
func (cl *crashLoop) servingPID() int {
	c, err := api.DialRemote(gateway.SocketPath(cl.home))
	if err != nil {
		return 0
	}
	defer c.Close()
	st, err := c.Status(context.Background())
	if err != nil {
		return 0
	}
	return st.PID
}

// kill SIGKILLs the gateway process.
func (cl *crashLoop) kill() {
	require.NoError(cl.t, cl.gw.Process.Signal(syscall.SIGKILL))
	<-cl.gwDone
}

// taskJob runs a task through tasks run (--detach or in the foreground),
// with an idempotency key when keyed, whose command appends its label to
// the ledger and exits with code. A keyed command is retried blindly, as
// a script would, until it answers (up to five times).
func (cl *crashLoop) taskJob(label string, detach, keyed bool, code int) func() crashResult {
	return func() crashResult {
		args := []string{"tasks", "run", "--owner", crashOwner, "--label", label}
		if detach {
			args = append(args, "--detach")
		}
		if keyed {
			args = append(args, "--idempotency-key", "key-"+label)
		}
		args = append(args, "--", "sh", "-c", fmt.Sprintf(`echo "$FLOWGATE_TASK_ID %s" >> %s; sleep 0.2; exit %d`, label, cl.ledger, code))
		r := crashResult{kind: "run", label: label, want: code}
		for try := 0; ; try++ {
			r.code, _, r.stderr = cl.cli(args...)
			answered := r.code == code || (r.code == 5 && !keyed)
			if answered || !keyed || try == 4 {
				if r.code < 0 || (keyed && !answered) {
					r.failure = fmt.Sprintf("no answer (%d tries): exit %d: %s", try+1, r.code, r.stderr)
				}
				if r.code == 5 {
					cl.mu.Lock()
					cl.unknown = append(cl.unknown, label+": "+r.stderr)
					cl.mu.Unlock()
				}
				return r
			}
			cl.mu.Lock()
			cl.tries++
			cl.retried = append(cl.retried, fmt.Sprintf("%s exited %d: %s", label, r.code, r.stderr))
			cl.mu.Unlock()
		}
	}
}

// pipelineJob starts the two-step workflow tagged label with pipeline run
// --detach.
func (cl *crashLoop) pipelineJob(label, wf string) func() crashResult {
	return func() crashResult {
		r := crashResult{kind: "pipeline", label: label}
		var stdout string
		r.code, stdout, r.stderr = cl.cli("pipeline", "run", "--detach", "--args-json", fmt.Sprintf(`{"tag":%q}`, label), wf)
		if r.code == 0 {
			r.flowID = strings.Fields(stdout)[2]
		}
		return r
	}
}

// createFlow creates the managed flow the update jobs change.
func (cl *crashLoop) createFlow() string {
	code, stdout, stderr := cl.cli("tasks", "flow", "create", "--controller", "crashloop", "--allow-unknown-controller", "--goal", "updates", "--owner", crashOwner, "--state", `{"n":-1}`, "--json")
	require.Equal(cl.t, 0, code, stderr)
	var f sdk.Flow
	require.NoError(cl.t, json.Unmarshal([]byte(stdout), &f))
	return f.ID
}

// updateJob reads the flow and sets its state to {"n":round} at the
// revision it read, then reads it again: exit 0 must have written it, 1
// or 3 must not have, 5 may have either way.
func (cl *crashLoop) updateJob(flowID string, round int) func() crashResult {
	return func() crashResult {
		r := crashResult{kind: "update", label: fmt.Sprintf("r%02d-update", round)}
		f, err := cl.readFlow(flowID)
		if err != nil {
			r.failure = err.Error()
			return r
		}
		r.code, _, r.stderr = cl.cli("tasks", "flow", "update", flowID, "--expected-revision", strconv.FormatInt(f.Revision, 10), "--state", fmt.Sprintf(`{"n":%d}`, round))
		if f, err = cl.readFlow(flowID); err != nil {
			r.failure = err.Error()
			return r
		}
		var state struct{ N int }
		if err := json.Unmarshal(f.State, &state); err != nil {
			r.failure = fmt.Sprintf("state %s: %v", f.State, err)
			return r
		}
		written := state.N == round
		switch {
		case r.code == 0 && !written, (r.code == 1 || r.code == 3) && written:
			r.failure = fmt.Sprintf("update exited %d but the state is %d: %s", r.code, state.N, r.stderr)
		case r.code != 0 && r.code != 1 && r.code != 3 && r.code != 5:
			r.failure = fmt.Sprintf("update exited %d: %s", r.code, r.stderr)
		}
		return r
	}
}

// readFlow reads flow id through the CLI, again (bounded) while a read
// meets a gateway that stops.
func (cl *crashLoop) readFlow(id string) (sdk.Flow, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		var f sdk.Flow
		code, stdout, stderr := cl.cli("tasks", "flow", "show", id, "--json")
		if code == 0 {
			return f, json.Unmarshal([]byte(stdout), &f)
		}
		if time.Now().After(deadline) {
			return f, fmt.Errorf("tasks flow show kept failing for 60s: exit %d: %s", code, stderr)
		}
		time.Sleep(20 * time.Millisecond) // a bounded poll
	}
}

// settle waits, bounded, until every task and pipeline flow of the loop
// ended.
func (cl *crashLoop) settle() {
	c, err := api.DialRemote(gateway.SocketPath(cl.home))
	require.NoError(cl.t, err)
	defer c.Close()
	polltest.Until(cl.t, "", func() (bool, string) {
		active := 0
		for _, task := range cl.tasks(c) {
			if task.Status.Active() {
				active++
			}
		}
		page, err := c.ViewFlows(context.Background(), apitype.FlowFilter{ControllerID: "pipeline", Limit: 1000})
		require.NoError(cl.t, err)
		for _, f := range page.Flows {
			if !f.Status.Terminal() {
				active++
			}
		}
		return active == 0, fmt.Sprintf("%d tasks or pipelines still active", active)
	}, polltest.Within(60*time.Second), polltest.Every(50*time.Millisecond))
}

// tasks lists every task of the loop.
func (cl *crashLoop) tasks(c api.Client) []*stored.Task {
	var all []*stored.Task
	f := apitype.TaskFilter{OwnerKey: crashOwner, Limit: 500}
	for {
		page, err := c.ListTasks(context.Background(), f)
		require.NoError(cl.t, err)
		all = append(all, page.Tasks...)
		if page.Next == "" {
			return all
		}
		f.After = page.Next
	}
}

// check compares every answer with the records and the ledger.
func (cl *crashLoop) check(results []crashResult, seed uint64) {
	t := cl.t
	b, err := os.ReadFile(cl.ledger)
	require.NoError(t, err)
	ran := map[string]int{} // label (a pipeline's: label-step) → runs
	for line := range strings.Lines(strings.TrimSpace(string(b))) {
		_, label, _ := strings.Cut(strings.TrimSpace(line), " ") // "TASK-ID label" or "step label-step"
		ran[label]++
	}
	for label, n := range ran {
		require.Equal(t, 1, n, "%s ran %d times (seed %d)", label, n, seed)
	}

	c, err := api.DialRemote(gateway.SocketPath(cl.home))
	require.NoError(t, err)
	defer c.Close()
	byLabel := map[string][]*stored.Task{}
	for _, task := range cl.tasks(c) {
		byLabel[task.Label] = append(byLabel[task.Label], task)
		require.Contains(t, []sdk.TaskStatus{sdk.TaskSucceeded, sdk.TaskFailed}, task.Status,
			"task %s (%s) ended %s: %v (seed %d)", task.ID, task.Label, task.Status, task.Errors, seed)
		require.Equal(t, 1, ran[task.Label], "task %s (%s) was created but never ran (seed %d)", task.ID, task.Label, seed)
	}
	for _, r := range results {
		what := fmt.Sprintf("%s %s exited %d (seed %d): %s", r.kind, r.label, r.code, seed, r.stderr)
		switch r.kind {
		case "run":
			tasks := byLabel[r.label]
			require.LessOrEqual(t, len(tasks), 1, "%s: %d tasks", what, len(tasks))
			switch r.code {
			case 5:
			case 1:
				require.Empty(t, tasks, "%s, yet its task was created", what)
			default:
				require.Len(t, tasks, 1, "%s, yet no task exists", what)
				require.Equal(t, r.want, r.code, what)
				require.NotNil(t, tasks[0].ExitCode, what)
				require.Equal(t, r.code, *tasks[0].ExitCode, "%s, but its task recorded another exit code", what)
			}
		case "pipeline":
			for _, step := range []string{"one", "two"} {
				switch n := ran[r.label+"-"+step]; r.code {
				case 0:
					require.Equal(t, 1, n, "%s, but step %s ran %d times", what, step, n)
				case 1:
					require.Zero(t, n, "%s, yet step %s ran", what, step)
				default:
					require.Equal(t, 5, r.code, what)
				}
			}
			if r.code == 0 {
				v, err := c.ViewFlow(context.Background(), r.flowID)
				require.NoError(t, err, what)
				require.Equal(t, sdk.FlowSucceeded, v.Status, "%s: %s", what, v.BlockedSummary)
			}
		}
	}
	for _, why := range cl.retried {
		t.Logf("blind retry after: %s", why)
	}
	for _, what := range cl.unknown {
		t.Logf("outcome unknown: %s", what)
	}
	t.Logf("crash loop: %d answers, %d blind retries of keyed commands, %d runs without a key ended unknown (exit 5), %d gateway starts lost to a command's own gateway",
		len(results), cl.tries, len(cl.unknown), cl.restarted)
}
