// Package runner runs queued tasks as supervised processes and records how
// they end.
//
// # Shims
//
// Every attempt runs under a shim (package shim): a small process in its
// own session that owns the task's process group, writes its output to
// files, enforces its budgets, and records its exit status durably in the
// attempt's record file. The runner only starts shims (the lean
// flowgate-shim binary when it sits next to the running executable),
// hands each its spec on a pipe, and reads what they record, so a task
// outlives the runner: Stop leaves tasks running, and the next Start
// reattaches to live shims (identified by pid and start time, never pid
// alone), settles the attempts whose status was recorded meanwhile, and
// marks the rest lost. A reattached shim's exit is noticed when it
// happens (shim.NotifyExit), not at the next poll. The lean binary is
// used only when it was built from the same version as the executable
// next to it (Shims).
//
// # Never twice
//
// An attempt is recorded as running before its shim starts. At recovery,
// an attempt whose shim never claimed it (no claim in its record) is
// withdrawn (shim.Withdraw) and queued again: its command certainly did
// not run. A lost attempt (a dead shim without a status) is re-run only
// when the task's retry policy says safe_to_repeat, since the command
// may have had side effects.
//
// The claim is synced only when a later boot may read it: the start
// records the machine's boot (stored.Task.Boot), and a shim claiming in
// that boot leaves its claim in the page cache, which every process's
// crash leaves intact. After the machine restarted, an attempt of the
// boot before that shows no claim may have run all the same: it is lost,
// never queued again as one that did not run.
//
// # Admission, retries, progress
//
// At most MaxRunning tasks run; the rest wait in FIFO order and survive
// restarts. When there is room for several, they are launched at once,
// so their commits share the store's group commits, and a slot freed
// while others launch is filled without waiting for them. A task that
// ends succeeded or cancelled while another waits hands its slot over in
// the commit of its end (engine.FinishAndStart), and a task created
// while a slot is free and none waits is started by the commit that
// creates it (the runner is the engine's Starter: Reserve, Launch). A
// failed attempt is retried with backoff (Backoff) while its
// policy allows, after it is classified (see Failure classification).
// Progress lines are read from
// the task's progress file and recorded with their file offset, in one
// transaction, so a milestone is stored exactly once across crashes. The
// progress file exists once the task writes to it; none means no progress
// yet. A task that creates it with its own umask's mode (the shell's >>)
// has it made 0600 by its shim when it ends.
//
// # Files
//
// A task's files live in its TaskDir, logs/<task> under the home, which
// is all a task's start creates besides the attempt's record, stdout and
// stderr: the first attempt's files are in the TaskDir itself, attempt n
// > 1's in its subdirectory n, and the progress file (ProgressFile) in
// the TaskDir, shared by the attempts. LogDir finds an attempt's
// directory, an older gateway's logs/<task>/1 included.
//
// # Failure classification and diagnosis
//
// Every failed attempt is classified before any retry (Classifier, with
// DefaultFailurePatterns or a runtime's own from the gateway config):
// billing stops the task and marks its chain billing-exhausted; transient
// (HTTP 429 among them) follows the retry policy; startup (a DNS failure
// or a refused connection before the task reported anything) is retried
// once in place; the rest needs a diagnosis. A configured diagnoser
// (DiagnoserConfig) gets bounded context on stdin and answers with advice:
// only a valid retry recommendation re-runs the node, once per run; revise
// and stop end the task with the advice stored, and a diagnosis that fails
// in any way never falls back to a retry. The diagnosis is recorded before
// the diagnoser starts, so a restart marks it interrupted instead of
// running it again. No task of a chain that is billing- or
// budget-exhausted starts or is retried.
//
// # Environment
//
// A task's environment does not depend on who runs it: every shim starts
// with shell.BaseEnv of the runner's own environment (PATH, HOME, LANG,
// TZ, USER, FLOWGATE_HOME; never the gateway's other FLOWGATE_* settings
// or credentials), plus the values CreateHolding keeps in memory for the
// task (the caller's environment with --inherit-env, the --secret-env
// values); the task's stored env and the FLOWGATE_* task variables come on
// top. Held values are never written: a runner that does not hold them (a
// restarted gateway) fails the task at start instead of running it
// without them.
package runner
