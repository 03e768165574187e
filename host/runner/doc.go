// Package runner runs queued tasks as supervised processes and records how
// they end.
//
// # Shims
//
// Every attempt runs under a shim (package shim): a small process in its
// own session that owns the task's process group, writes its output to
// files, enforces its budgets, and records its exit status atomically. The
// runner only starts shims and reads what they write, so a task outlives
// the runner: Stop leaves tasks running, and the next Start reattaches to
// live shims (identified by pid and start time, never pid alone), settles
// the attempts whose status file appeared meanwhile, and marks the rest
// lost.
//
// # Never twice
//
// An attempt is recorded as running before its shim starts. At recovery,
// an attempt whose shim never claimed it (no shim.json) is withdrawn and
// queued again: its command certainly did not run. A lost attempt (a dead
// shim without a status) is re-run only when the task's retry policy says
// safe_to_repeat, since the command may have had side effects.
//
// # Admission, retries, progress
//
// At most MaxRunning tasks run; the rest wait in FIFO order and survive
// restarts. A failed attempt is classified (Classify) and retried with
// backoff (Backoff) while its policy allows. Progress lines are read from
// the task's progress file and recorded with their file offset, in one
// transaction, so a milestone is stored exactly once across crashes. The
// runner creates the progress file 0600 before the task starts, whatever
// the task's umask.
//
// # Environment
//
// A task's environment does not depend on who runs it: every shim starts
// with BaseEnv of the runner's own environment (PATH, HOME, LANG, TZ,
// USER, FLOWGATE_*), plus the values CreateHolding keeps in memory for the
// task (the caller's environment with --inherit-env, the --secret-env
// values); the task's stored env and the FLOWGATE_* task variables come on
// top. Held values are never written: a runner that does not hold them (a
// restarted gateway) fails the task at start instead of running it
// without them.
package runner
