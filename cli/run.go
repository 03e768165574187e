package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins"
	"github.com/flowgate/flowgate/sdk"
)

type runOpts struct {
	detach, shell, safeToRepeat, agent      bool
	label, owner, cwd, idem, stdin, probe   string
	on                                      string
	onNoProgress                            string
	onFinish                                finishFlags
	notify                                  notifyFlags
	milestones                              []string
	env, secretEnv                          []string
	inheritEnv                              bool
	timeout, maxBudget, noProgress, backoff time.Duration
	retries                                 int
	asJSON                                  bool
	budget                                  budgetFlags
	session                                 sessionFlags
}

func newRunCmd(e *env) *cobra.Command {
	var o runOpts
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Run a command as a supervised task and follow it",
		Long: `Run a command as a task (runtime cli) with its own mirrored flow. The task
runs under a shim: it survives this command and the gateway being killed.

Without --detach the command streams the task's output, shows its progress,
and exits with the task's exit code (124 when it timed out, 130 when it was
cancelled, 128+N when signal N killed it, as shells do: 137 for SIGKILL).
Ctrl-C stops following and leaves the task running. With --detach it
prints the task and flow ids and returns once the task started.

With no gateway running, this command hosts one for its own duration.
When the gateway dies under it, it follows the task on through the next
one (or one it hosts) and still exits with the task's code. When the
gateway dies after the submission went out and before it answered, a run
with --idempotency-key asks the next gateway again (a key makes a repeat
return the first task, never run it twice); without one it exits 5, the
outcome unknown, and says how to look for the task. A gateway that does
not answer within $FLOWGATE_ANSWER_WAIT (default 30s), as when it is
paused, counts as one that died: the command exits 5 the same way.

The task's environment is the same either way: PATH, HOME, LANG, TZ, USER
and FLOWGATE_HOME of the gateway running it (never its other FLOWGATE_*
settings or credentials), then this command's whole environment but for
its FLOWGATE_* variables with --inherit-env, then --env, then --secret-env,
then the FLOWGATE_* variables of the task (FLOWGATE_TASK_ID and others). --env
values are stored with the task (tasks show redacts them); --secret-env
values (from this command's environment, or NAME=@FILE) reach the task
only, held in the gateway's memory: never stored, never printed.

With --session NAME the task belongs to the session's lineage in its
working directory: when the agent reports its session id on the progress
channel ({"session_id":"…"}), the next run continues that session
(FLOWGATE_SESSION_ID, FLOWGATE_RESUME=1, and --resume-prompt as
FLOWGATE_PROMPT when the last run was interrupted) and prints a wake
banner. --new archives the lineage first; see flowgate sessions and
docs/agents.md.`,
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 {
				return usageError{errors.New("tasks run needs a command after --, e.g. flowgate tasks run -- make test")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error { return e.runTask(cmd, o, a) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.detach, "detach", false, "print the ids and return once the task started")
	fl.BoolVar(&o.shell, "shell", false, "run the arguments as one /bin/sh -c command line")
	fl.StringVar(&o.label, "label", "", "a name for the task")
	fl.StringVar(&o.on, "on", "", "run only on a gateway that carries this label (its config's cluster.labels); the task waits queued until one takes it")
	fl.StringVar(&o.owner, "owner", "", "owner key (default: local:$USER)")
	fl.StringVar(&o.cwd, "cwd", "", "working directory (default: the current one)")
	fl.StringArrayVar(&o.env, "env", nil, "set an environment variable for the task, K=V (repeatable; stored with the task)")
	fl.StringArrayVar(&o.secretEnv, "secret-env", nil, "pass NAME from this command's environment, or NAME=@FILE, to the task without storing it (repeatable)")
	fl.BoolVar(&o.inheritEnv, "inherit-env", false, "give the task this command's whole environment but its FLOWGATE_* variables (held in memory, not stored)")
	fl.DurationVar(&o.timeout, "timeout", 0, "stop an attempt after this long (e.g. 10m)")
	fl.DurationVar(&o.maxBudget, "max-budget", 0, "stop the task this long after its first start, across retries (with --detach, default the gateway's limits.detached_max_budget, 24h; 0 is none)")
	fl.DurationVar(&o.noProgress, "no-progress-budget", 0, "stop the task when it reported progress once and then nothing for this long (with --detach, default the gateway's limits.detached_no_progress_budget, 1h; 0 is none)")
	fl.IntVar(&o.retries, "retries", 0, "retry a failed attempt up to N times, at most 99 (fatal failures are never retried)")
	fl.DurationVar(&o.backoff, "retry-backoff", 0, "base delay before a retry, doubled each time (default 1s)")
	fl.BoolVar(&o.safeToRepeat, "safe-to-repeat", false, "allow re-running the command when a crash left its outcome unknown")
	fl.BoolVar(&o.agent, "agent", false, "run as an agent task (runtime agent): network drops are transient, and without --retries it gets 6 attempts, 4s-120s apart")
	fl.StringVar(&o.probe, "probe", "", "before a retry after a transient failure, wait until this host:port resolves and accepts a connection (default for --agent: the gateway's probe.endpoint)")
	o.onFinish.add(fl, "when the task is given up on and when it ends (at least once each)")
	o.notify.add(fl, "task")
	fl.StringArrayVar(&o.milestones, "notify-on-milestone", nil, "send a message to --notify-to the first time the task reports this milestone: once per run and name (repeatable, or a comma list)")
	fl.StringVar(&o.onNoProgress, "on-no-progress", "", "what a spent --no-progress-budget does: stop (default) the command, or keep it running and mark the task interrupted")
	fl.StringVar(&o.idem, "idempotency-key", "", "a key that makes this run happen once: a repeat returns the first task")
	fl.StringVar(&o.stdin, "stdin", "", "feed this file to the task's standard input (- reads this command's input)")
	fl.BoolVar(&o.asJSON, "json", false, "with --detach, print the task as JSON")
	o.budget.add(fl)
	o.session.add(fl)
	return cmd
}

// input builds the task from the flags.
func (e *env) runInput(o runOpts, argv []string, dir string) (apitype.CreateTaskInput, error) {
	in := apitype.CreateTaskInput{Runtime: "cli", Label: o.label, OwnerKey: o.owner, IdempotencyKey: o.idem}
	budget, err := o.budget.budget()
	if err != nil {
		return in, err
	}
	in.Budget = budget
	if in.OwnerKey == "" {
		in.OwnerKey = localOwner()
	}
	spec := &in.Spec
	spec.On = o.on
	if o.shell {
		spec.Shell = strings.Join(argv, " ")
	} else {
		spec.Argv = argv
	}
	cwd := o.cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return in, err
		}
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return in, err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return in, usageError{fmt.Errorf("--cwd %s is not a directory", cwd)}
	}
	spec.Cwd = abs
	for _, kv := range o.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(k, "\x00") {
			return in, usageError{fmt.Errorf("--env %q must look like NAME=value", kv)}
		}
		if spec.Env == nil {
			spec.Env = map[string]string{}
		}
		spec.Env[k] = v
	}
	if err := heldEnv(&in, o); err != nil {
		return in, err
	}
	for name, d := range map[string]time.Duration{"--timeout": o.timeout, "--max-budget": o.maxBudget, "--no-progress-budget": o.noProgress, "--retry-backoff": o.backoff} {
		if d < 0 {
			return in, usageError{fmt.Errorf("%s must not be negative (got %s)", name, d)}
		}
	}
	spec.Timeout, spec.MaxBudget, spec.NoProgressBudget = sdk.Duration(o.timeout), sdk.Duration(o.maxBudget), sdk.Duration(o.noProgress)
	if o.retries < 0 || o.retries >= api.MaxAttempts {
		return in, usageError{fmt.Errorf("--retries must be between 0 and %d (got %d)", api.MaxAttempts-1, o.retries)}
	}
	if o.retries > 0 || o.safeToRepeat {
		spec.Retry = &sdk.RetryPolicy{MaxAttempts: o.retries + 1, Backoff: sdk.Duration(o.backoff), SafeToRepeat: o.safeToRepeat}
	}
	spec.Probe, spec.OnNoProgress = o.probe, o.onNoProgress
	spec.OnFinish = o.onFinish.notify()
	ns, err := o.notify.settings()
	if err != nil {
		return in, err
	}
	ns.spec(spec)
	spec.NotifyOnMilestone = milestoneNames(o.milestones)
	if len(spec.NotifyOnMilestone) > 0 && len(spec.NotifyTo) == 0 {
		return in, usageError{errors.New("--notify-on-milestone needs somewhere to send: add --notify-to DEST")}
	}
	if o.agent {
		in.Runtime = sdk.RuntimeAgent
		if o.retries == 0 && o.safeToRepeat {
			spec.Retry = sdk.AgentRetryPolicy()
			spec.Retry.SafeToRepeat = true
		}
	}
	if spec.Session, err = o.session.spec(); err != nil {
		return in, err
	}
	if o.stdin != "" {
		path, err := e.stdinFile(o.stdin, dir)
		if err != nil {
			return in, err
		}
		spec.Stdin = path
	}
	return in, nil
}

// stdinFile returns the file the task reads as stdin: the named file, or
// for "-" a copy of this command's input kept under the home.
func (e *env) stdinFile(name, dir string) (string, error) {
	if name != "-" {
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", usageError{fmt.Errorf("--stdin: %w", err)}
		}
		return abs, nil
	}
	inputs := filepath.Join(dir, "inputs")
	if err := os.MkdirAll(inputs, 0o700); err != nil {
		return "", err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	path := filepath.Join(inputs, hex.EncodeToString(b[:])+".stdin")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, e.stdin)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, err
}

func (e *env) runTask(cmd *cobra.Command, o runOpts, argv []string) error {
	dir, err := e.home()
	if err != nil {
		return err
	}
	in, err := e.runInput(o, argv, dir)
	if err != nil {
		return err
	}
	// A detached run nobody follows gets the gateway's detached max budget
	// (limits.detached_max_budget, 24 h by default) unless it gave one;
	// --max-budget 0 runs without one.
	in.DetachedBudget = o.detach && !cmd.Flags().Changed("max-budget")
	// Likewise its no-progress budget (limits.detached_no_progress_budget,
	// 1 h by default), armed only once the task reported progress.
	in.DetachedNoProgress = o.detach && !cmd.Flags().Changed("no-progress-budget")
	ctx := cmd.Context()
	l, err := e.openLink(ctx, cmd, dir)
	if err != nil {
		return err
	}
	defer l.close()
	if o.session.fresh {
		if err := e.startOver(ctx, l, in.Spec); err != nil {
			return err
		}
	}
	task, created, err := l.submit(ctx, in)
	if err != nil {
		return err
	}
	if !created {
		fmt.Fprintf(e.stderr, "Task %s already exists for idempotency key %q (%s); not run again.\n", task.ID, in.IdempotencyKey, task.Status)
	}
	if o.detach {
		launched, lost := gateway.AwaitLaunched(ctx, dir, task, l.resolve)
		if lost == nil {
			task = launched
		}
		if err := (printer{e.stdout, o.asJSON}).emit(task, func(w io.Writer) {
			fmt.Fprintf(w, "Task %s (flow %s) is %s.\nFollow it: flowgate tasks logs %s -f\n", task.ID, task.FlowID, task.Status, task.ID)
		}); err != nil || lost == nil {
			return err
		}
		return exitStatus{code: exitUnknown, msg: fmt.Sprintf(
			"task %s was created, then this command lost sight of it (%v), so whether it started is unknown; it was %s when last seen. "+
				"Look: flowgate tasks show %s (or flowgate tasks list)", task.ID, lost, task.Status, task.ID)}
	}
	return e.follow(ctx, l, dir, task)
}

// workClient returns a client for a command that runs work: the running
// gateway's (waiting for one that is starting), or a gateway hosted in
// this process until stop is called, with the home's config
// (gateway.HomeConfig) as a gateway started without --config has. When another gateway wins the race
// to start, it is used. A gateway that is being restarted (the old one
// still holds the store, or the new one holds it and does not serve its
// socket yet) is waited for, trying the socket and the store in turn, up
// to gateway.RestartWait in all; only then does it fail, naming the
// holder. With --store the home's socket is not asked: the
// in-process gateway runs on that store, and one that another gateway
// holds (etcd) is refused, naming the holder.
func (e *env) workClient(ctx context.Context, cmd *cobra.Command, dir string) (api.Client, func(), error) {
	deadline := time.Now().Add(gateway.RestartWait)
	for {
		c, stop, err := e.reachOrHost(ctx, cmd, dir, time.Until(deadline))
		switch {
		case err == nil || !passing(err) || errors.Is(err, gateway.ErrStoreHeld) || ctx.Err() != nil:
			// A gateway elsewhere serving the etcd store is not changing
			// hands with this home's.
			return c, stop, err
		case !time.Now().Before(deadline):
			return nil, nil, fmt.Errorf("no gateway of %s could be reached or started in %s, as gateways stopped and started: %w", dir, gateway.RestartWait, err)
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(restartPoll):
		}
	}
}

// restartPoll is how long workClient pauses between tries while gateways
// change hands.
const restartPoll = 25 * time.Millisecond

// reachOrHost is one try of workClient: the home's gateway, waited for up
// to wait while it starts, else a gateway hosted in this process. An
// error passing accepts means gateways are changing hands: another try
// may find one.
func (e *env) reachOrHost(ctx context.Context, cmd *cobra.Command, dir string, wait time.Duration) (api.Client, func(), error) {
	if e.store.URL == "" {
		c, err := gateway.Dial(dir, wait)
		if err == nil {
			return c, func() { c.Close() }, nil
		}
		if !errors.Is(err, api.ErrNoGateway) {
			return nil, nil, err
		}
	}
	fc, err := gateway.HomeConfig(dir, "")
	if err != nil {
		return nil, nil, fmt.Errorf("%w; fix the file, or start a gateway with flowgate gateway --config FILE", err)
	}
	spec := e.store
	if spec.URL == "" {
		// The store the home's gateway serves, though it is not running.
		if spec, err = gateway.HomeStore(dir); err != nil {
			return nil, nil, err
		}
	}
	g, err := gateway.New(gateway.Config{Home: dir, File: fc.InProcess(), Owner: cmd.CommandPath(), Builtins: plugins.Names(), Store: spec, Controllers: plugins.Controllers(), Solo: true})
	if err != nil {
		return nil, nil, err
	}
	err = g.Start(ctx)
	if errors.Is(err, gateway.ErrStoreHeld) {
		return nil, nil, fmt.Errorf("%w; this command runs its work in a gateway, and a gateway elsewhere serves this etcd store: run the command on that gateway's machine, or record the work with a command that only records it", err)
	}
	if err != nil {
		return nil, nil, err
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := g.Stop(sctx); err != nil {
			fmt.Fprintf(e.stderr, "flowgate: stopping the in-process gateway: %v\n", err)
		}
	}
	return g.Client(), stop, nil
}

// withWorkClient is withClient for commands that run work: with no
// gateway running, one is hosted in-process for the command's duration.
func (e *env) withWorkClient(cmd *cobra.Command, fn func(ctx context.Context, c api.Client) error) error {
	dir, err := e.home()
	if err != nil {
		return err
	}
	c, stop, err := e.workClient(cmd.Context(), cmd, dir)
	if err != nil {
		return err
	}
	defer stop()
	return fn(cmd.Context(), c)
}

// taskExit is the exit code `tasks run` ends with for a finished task.
func taskExit(t *apitype.Task) int {
	switch t.Status {
	case sdk.TaskSucceeded:
		return 0
	case sdk.TaskBlocked:
		return exitBlocked
	case sdk.TaskTimedOut:
		return 124
	case sdk.TaskCancelled:
		return 130
	}
	if t.ExitCode != nil && *t.ExitCode > 0 {
		return *t.ExitCode
	}
	if n := unix.SignalNum(t.Signal); n > 0 {
		return 128 + int(n)
	}
	return 1
}

// follow streams the task's output and progress until it ends, then
// returns its exit status. Ctrl-C stops following only. When the gateway
// stops meanwhile, it follows on through the next one (see link).
func (e *env) follow(ctx context.Context, l *link, dir string, t *apitype.Task) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := newFollower(e.stdout, e.stderr, dir, t.ID)
	var p pace
	for {
		last, changed := t, l.changed()
		var err error
		if t, err = l.resolve(ctx, t.ID); err != nil {
			t = last
			if ctx.Err() != nil {
				break
			}
			f.clearBar()
			return lostSight(t, err)
		}
		f.pump(t)
		if t.Status.Terminal() {
			f.done(t)
			if t.Status == sdk.TaskSucceeded {
				return nil
			}
			if t.Status == sdk.TaskBlocked {
				return exitStatus{code: exitBlocked, msg: fmt.Sprintf("task %s is blocked: %s; once that is dealt with, run it again with flowgate tasks flow retry %s", t.ID, clean(t.Blocked), t.FlowID)}
			}
			return exitStatus{code: taskExit(t), msg: fmt.Sprintf("task %s %s: %s", t.ID, t.Status, lastError(t))}
		}
		if in := t.Interrupted; in != nil && in.ChildStillRunning {
			f.done(t)
			return exitStatus{code: 124, msg: fmt.Sprintf("task %s interrupted (%s): its command keeps running and its end is still recorded; see flowgate tasks show %s", t.ID, in.Reason, t.ID)}
		}
		select {
		case <-ctx.Done():
		case <-changed:
			continue
		case <-time.After(p.after(!t.UpdatedAt.Equal(last.UpdatedAt))):
			continue
		}
		break
	}
	f.clearBar()
	fmt.Fprintf(e.stderr, "Stopped following; task %s keeps running.\nFollow it: flowgate tasks logs %s -f\nCancel it: flowgate tasks cancel %s\n", t.ID, t.ID, t.ID)
	return exitStatus{code: 130}
}

func lastError(t *apitype.Task) string {
	if len(t.Errors) > 0 {
		return clean(t.Errors[len(t.Errors)-1])
	}
	if t.Reason != "" {
		return t.Reason
	}
	return "no error recorded"
}
