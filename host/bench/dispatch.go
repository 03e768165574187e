package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// dispatch measures tasks of true per second through a temporary gateway
// against bare fork/exec of the same program, in interleaved rounds, as
// the gateway's BenchmarkDispatch does: each gateway round is a fresh
// home and gateway admitting Sizes.Concurrency tasks at once, fed by as
// many submitters; the clock runs from the first RunTask to the last
// task's end. Every task must succeed with exit code 0 in one attempt.
func (r *run) dispatch(ctx context.Context) ([]Figure, error) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		return nil, fmt.Errorf("find true: %w", err)
	}
	var rounds []dispatchRound
	for round := range r.sz.Rounds {
		files, err := probeTaskFiles(filepath.Join(r.tmp, fmt.Sprintf("d%d-files", round)))
		if err != nil {
			return nil, err
		}
		d, err := r.dispatchGateway(ctx, filepath.Join(r.tmp, fmt.Sprintf("d%d", round)), truePath)
		if err != nil {
			return nil, err
		}
		d.taskFiles = files
		if err := r.dispatchBare(ctx, truePath, &d); err != nil {
			return nil, err
		}
		rounds = append(rounds, d)
	}
	return r.dispatchFigures(rounds), nil
}

// dispatchGateway runs one gateway round in home and returns its
// throughput, CPU per task and tasks running at once.
func (r *run) dispatchGateway(ctx context.Context, home, truePath string) (dispatchRound, error) {
	var d dispatchRound
	g, err := r.newGateway(home, r.sz.Concurrency)
	if err != nil {
		return d, err
	}
	bg := context.WithoutCancel(ctx)
	if err := g.Start(bg); err != nil {
		return d, err
	}
	// The round's home stays until the scratch directory goes at the end
	// of the run. Removing its thousands of files here made every later
	// phase pay for them: on ext4 without a journal (this project's VM) a
	// new inode is found by scanning past the inodes freed in the last
	// minutes, so each task's files cost more in the phases after.
	defer func() { _ = g.Stop(bg) }()
	c := g.Client()
	// A gateway in service has a pool of idle shims; a gateway just
	// started makes a shim process for each slot's first task. Those
	// starts are not dispatch, and a --quick round has only 100 tasks to
	// spread them over: one task per slot, untimed, fills the pool first,
	// as the controller round trip warms up before it is timed.
	warm := r.sz.Concurrency
	if err := submitAs(ctx, c, warmupOwner, warm, r.sz.Concurrency, "dispatch warm-up", []string{truePath}); err != nil {
		return d, err
	}
	if err := waitTasks(ctx, c, warm, 5*time.Millisecond); err != nil {
		return d, err
	}
	w0, _ := g.StoreWriter()
	// Children are read after RUSAGE_CHILDREN at the start and before it
	// at the end, so that one reaped in between is never taken off
	// without being counted; this process's own time is read after the
	// scan at the start and before those at the end, which it leaves out.
	children0 := childrenCPU()
	shims0, _ := liveChildrenCPU()
	self0, start := selfCPU(), time.Now()
	if err := submit(ctx, c, r.sz.DispatchTasks, r.sz.Concurrency, "dispatch", []string{truePath}); err != nil {
		return d, err
	}
	if err := waitTasks(ctx, c, warm+r.sz.DispatchTasks, 5*time.Millisecond); err != nil {
		return d, err
	}
	if w1, ok := g.StoreWriter(); ok && w1.Busy > w0.Busy {
		busy := w1.Busy - w0.Busy
		d.writerBusy = busy.Seconds() / time.Since(start).Seconds()
		d.writerApplying = (w1.Applying - w0.Applying).Seconds() / busy.Seconds()
	}
	page, err := c.ListTasks(ctx, apitype.TaskFilter{OwnerKey: benchOwner})
	if err != nil {
		return d, err
	}
	var end time.Time
	for _, t := range page.Tasks {
		if t.Status != sdk.TaskSucceeded || t.ExitCode == nil || *t.ExitCode != 0 || t.Attempts != 1 {
			return d, fmt.Errorf("task %s ended %s (exit code %v, attempt %d, %v); every task of true must succeed at once", t.ID, t.Status, t.ExitCode, t.Attempts, t.Errors)
		}
		if t.EndedAt.After(end) {
			end = t.EndedAt
		}
	}
	if len(page.Tasks) != r.sz.DispatchTasks {
		return d, fmt.Errorf("%d tasks recorded, want %d", len(page.Tasks), r.sz.DispatchTasks)
	}
	d.gateway = float64(len(page.Tasks)) / end.Sub(start).Seconds()
	d.running = runningAtOnce(page.Tasks, start, end)
	// The pooled shims outlive the tasks: RUSAGE_CHILDREN counts them,
	// and the tasks they waited for, once the gateway's stop has let
	// them go and reaped them. What those used before the clock started
	// (their own start, the warm-up's task) is taken off, and the
	// shims' own share read while they still run. A child that outlives
	// the stop is not the gateway's (a test's other processes): it is
	// neither counted nor taken off.
	self := selfCPU() - self0
	atEnd, _ := liveChildrenCPU()
	if err := g.Stop(bg); err != nil {
		return d, err
	}
	others, _ := liveChildrenCPU()
	children := childrenCPU() - children0
	var shims time.Duration
	for pid, cpu := range atEnd {
		if _, other := others[pid]; !other {
			shims += cpu - shims0[pid]
		}
	}
	for pid, cpu := range shims0 {
		if _, other := others[pid]; !other {
			children -= cpu
		}
	}
	n := float64(r.sz.DispatchTasks)
	d.cpu = cpuSplit{gateway: ms(self) / n, shims: ms(shims) / n, tasks: ms(children-shims) / n}
	return d, nil
}

// taskFilesProbed is how many task layouts probeTaskFiles makes.
const taskFilesProbed = 200

// probeTaskFiles returns the wall time, in µs, that making a task's four
// inodes (its directory, record, stdout and stderr, as a gateway makes
// them) takes in a new directory dir beside a dispatch round's home, over
// taskFilesProbed of them. It is a fact of the file system, as the raw
// fsync rate is: on ext4 without a journal a new inode is found by
// scanning past every inode freed in the last one to six minutes, so
// the same layout costs tens of microseconds in a quiet file system and
// more than a millisecond beside a large directory just removed (the
// scratch directory of a run before this one). The files stay until the
// run's end, for the same reason.
func probeTaskFiles(dir string) (float64, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return 0, fmt.Errorf("probe task files: %w", err)
	}
	start := time.Now()
	for i := range taskFilesProbed {
		task := filepath.Join(dir, strconv.Itoa(i))
		if err := os.Mkdir(task, 0o700); err != nil {
			return 0, fmt.Errorf("probe task files: %w", err)
		}
		for _, name := range []string{"record", "stdout", "stderr"} {
			f, err := os.OpenFile(filepath.Join(task, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return 0, fmt.Errorf("probe task files: %w", err)
			}
			if err := f.Close(); err != nil {
				return 0, fmt.Errorf("probe task files: %w", err)
			}
		}
	}
	return time.Since(start).Seconds() * 1e6 / taskFilesProbed, nil
}

// The owners of the bench's tasks: the timed ones, and those that warm a
// gateway up before the clock starts.
const (
	benchOwner  = "bench"
	warmupOwner = "bench-warmup"
)

// submit creates n detached tasks running argv through c from the given
// number of goroutines.
func submit(ctx context.Context, c api.Client, n, workers int, label string, argv []string) error {
	return submitAs(ctx, c, benchOwner, n, workers, label, argv)
}

// submitAs is submit with the tasks' owner.
func submitAs(ctx context.Context, c api.Client, owner string, n, workers int, label string, argv []string) error {
	return parallel(ctx, n, workers, func() error {
		_, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: owner, Label: label, Spec: sdk.TaskSpec{Argv: argv}})
		return err
	})
}

// dispatchBare runs Sizes.DispatchTasks processes of truePath, Sizes.Concurrency
// at a time, and sets the runs per second and CPU per run of d.
func (r *run) dispatchBare(ctx context.Context, truePath string, d *dispatchRound) error {
	self0, children0, start := selfCPU(), childrenCPU(), time.Now()
	run := func() error { return exec.Command(truePath).Run() }
	if err := parallel(ctx, r.sz.DispatchTasks, r.sz.Concurrency, run); err != nil {
		return err
	}
	d.bare = float64(r.sz.DispatchTasks) / time.Since(start).Seconds()
	n := float64(r.sz.DispatchTasks)
	d.bareCPU = cpuSplit{gateway: ms(selfCPU()-self0) / n, tasks: ms(childrenCPU()-children0) / n}
	return nil
}
