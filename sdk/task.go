package sdk

import (
	"encoding/json"
	"time"

	"github.com/flowgate/flowgate/sdk/duration"
)

// Task is the durable record of one detached run under a flow, as a
// controller sees it: what it runs, where it stands, what it produced.
//
// The gateway keeps more on each task for its own use (the pids of the
// task's process and of its shim, the member that runs it, how far its
// progress file was read, which notices and retries it already granted);
// those fields are not part of the protocol, so the runner can change
// them without changing it.
type Task struct {
	ID       string `json:"id"`
	FlowID   string `json:"flow_id"`
	OwnerKey string `json:"owner_key"`
	// Runtime is what runs the task: "cli", "pipeline", "cron", "agent" or a
	// plugin's own kind.
	Runtime        string     `json:"runtime"`
	Label          string     `json:"label,omitempty"`
	Spec           TaskSpec   `json:"spec"`
	IdempotencyKey string     `json:"idempotency_key,omitempty"`
	Status         TaskStatus `json:"status"`
	Attempts       int        `json:"attempts"`
	// Errors says why attempts failed, one entry each: the first 4 and
	// the latest are kept, 32 in all, each cut to 1 KiB.
	Errors []string `json:"errors,omitempty"`
	// ExitCode is the process exit code once the task ended; nil before.
	// A process killed by a signal has ExitCode 128 plus the signal's
	// number, as a shell reports it (137 for SIGKILL), and Signal set.
	ExitCode *int `json:"exit_code,omitempty"`
	// Signal names the signal that killed the process ("SIGKILL"); empty
	// when it exited by itself or never started.
	Signal   string    `json:"signal,omitempty"`
	Progress *Progress `json:"progress,omitempty"`
	// Milestones keeps the task's first milestones and its latest ones, in
	// order, at most 64 in all; MilestonesDropped counts those dropped from
	// between them to keep the record bounded. Seq numbers keep counting
	// across the gap.
	Milestones        []Milestone `json:"milestones,omitempty"`
	MilestonesDropped int64       `json:"milestones_dropped,omitempty"`
	Result            *Result     `json:"result,omitempty"`
	// Reason says why a task ended the way it did, machine-readably:
	// "timeout", "budget-exceeded", "no-progress", "cancelled",
	// "start-failed", "lost", "chain-halted" (not started: its chain is
	// billing- or budget-exhausted), "blocked" (see Blocked).
	Reason string `json:"reason,omitempty"`
	// Blocked is the reason the task last reported with a
	// {"blocked":"…"} progress line: a task that then exits 0 ends
	// blocked, and its mirrored flow's blocked_summary is this reason. A
	// task that exits non-zero fails as any other does. Empty when it
	// reported none.
	Blocked string `json:"blocked,omitempty"`
	// RetryOf is the task of the same mirrored flow this one runs again
	// (flowgate tasks flow retry); empty for a flow's first run.
	RetryOf string `json:"retry_of,omitempty"`
	// Class is how the task's latest failed attempt was classified (see
	// FailureClass); empty while no attempt failed.
	Class FailureClass `json:"class,omitempty"`
	// Diagnosis is the diagnoser's advice on the latest diagnosed
	// attempt; nil when none was asked for.
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
	// Interrupted is set when flowgate gave up waiting for the task (its
	// no-progress or max budget ran out); nil otherwise. The task keeps
	// running or ends as its child does.
	Interrupted *Interruption `json:"interrupted,omitempty"`
	// AttemptLog records, per attempt, how a failed one was classified,
	// how long the network was down after it, and whether the next one
	// resumed it; attempts that simply ran are left out. It holds the
	// latest 32.
	AttemptLog []AttemptRecord `json:"attempt_log,omitempty"`
	// AttemptTimes records when each attempt started and ended, in order:
	// the latest 32. A record written before they were kept has none, and
	// its StartedAt and EndedAt are all it says of its attempts' times.
	AttemptTimes []AttemptTime `json:"attempt_times,omitempty"`
	// Usage sums the usage the task reported on its progress channel
	// across its attempts; nil when it reported none.
	Usage *Usage `json:"usage,omitempty"`
	// Session is the agent session the task continued or reported; nil
	// when it has neither.
	Session *TaskSession `json:"session,omitempty"`
	// CancelRequestedAt is when someone first asked for the task to stop;
	// zero when nobody did (see CancelRequested).
	CancelRequestedAt time.Time `json:"cancel_requested_at,omitzero"`
	// RetryAt is when a queued retry may start; zero means at once.
	RetryAt      time.Time `json:"retry_at,omitzero"`
	CreatedAt    time.Time `json:"created_at"`
	StartedAt    time.Time `json:"started_at,omitzero"`
	UpdatedAt    time.Time `json:"updated_at"`
	EndedAt      time.Time `json:"ended_at,omitzero"`
	CleanupAfter time.Time `json:"cleanup_after,omitzero"`
}

// CancelRequested reports whether someone asked for the task to stop.
func (t *Task) CancelRequested() bool { return !t.CancelRequestedAt.IsZero() }

// Title is how a task is named to people: its label, else its command line.
func (t *Task) Title() string {
	if t.Label != "" {
		return t.Label
	}
	if t.Spec.Shell != "" {
		return t.Spec.Shell
	}
	s := ""
	for i, a := range t.Spec.Argv {
		if i > 0 {
			s += " "
		}
		s += a
	}
	return s
}

// TaskSpec says what a task runs and under which limits.
type TaskSpec struct {
	// Argv is the program and its arguments. Exactly one of Argv and Shell
	// is set for a task that runs a process.
	Argv []string `json:"argv,omitempty"`
	// Shell is a command line run by /bin/sh -c.
	Shell string `json:"shell,omitempty"`
	// Stdin is the path of a file fed to the task's standard input.
	Stdin string `json:"stdin,omitempty"`
	// Input is text fed to the task's standard input, for small inputs
	// such as a previous step's output; it is kept in the record, so keep
	// it under a few hundred KiB. Exactly one of Stdin and Input may be
	// set.
	Input string `json:"input,omitempty"`
	// Env is added to the task's environment. A task's environment is
	// always built the same way, whoever runs it: a minimal base (PATH,
	// HOME, LANG, TZ and USER of the gateway, and the FLOWGATE_*
	// variables), then the caller's environment when InheritEnv is set,
	// then Env, then the SecretEnv values. Env is stored with the task, so
	// keep secrets out of it.
	Env map[string]string `json:"env,omitempty"`
	// SecretEnv names variables whose values were sent with the request
	// that created the task and are held in the gateway's memory only:
	// never in the record, the attempt's spec.json or a backup. A task
	// whose values the gateway no longer holds (it restarted before the
	// task started) fails to start rather than run without them.
	SecretEnv []string `json:"secret_env,omitempty"`
	// InheritEnv says the task gets the environment of the caller that
	// created it, sent with the request and held in memory like the
	// SecretEnv values.
	InheritEnv bool   `json:"inherit_env,omitempty"`
	Cwd        string `json:"cwd,omitempty"`
	// Timeout is the wall-clock limit; zero means none.
	Timeout Duration `json:"timeout,omitempty"`
	// MaxBudget bounds the total run time across attempts; zero means none.
	MaxBudget Duration `json:"max_budget,omitempty"`
	// NoProgressBudget ends a task that reported progress once and then
	// fell silent this long; zero means none.
	NoProgressBudget Duration     `json:"no_progress_budget,omitempty"`
	Retry            *RetryPolicy `json:"retry,omitempty"`
	// Probe is a "host:port" whose DNS name and TCP port must answer
	// before a retry after a transient failure: while they do not, the
	// retry waits for the network to come back. Empty means the
	// gateway's configured probe for agent tasks, and none for others.
	Probe string `json:"probe,omitempty"`
	// OnNoProgress is what happens when NoProgressBudget runs out:
	// NoProgressStop (the default when empty) or NoProgressKeep.
	OnNoProgress string `json:"on_no_progress,omitempty"`
	// OnFinish, if set, is where the task's finish notifications go.
	OnFinish *FinishNotify `json:"on_finish,omitempty"`
	// NotifyPolicy, NotifyTo and NotifyTemplate are a detached run's
	// notify settings, which its mirrored flow takes (see Flow); a task
	// in a managed flow is told about through its flow's, and leaves
	// them empty.
	NotifyPolicy   string   `json:"notify_policy,omitempty"`
	NotifyTo       []string `json:"notify_to,omitempty"`
	NotifyTemplate string   `json:"notify_template,omitempty"`
	// NotifyOnMilestone names the milestones whose first report in the
	// run sends a message to each of its flow's NotifyTo: once per run
	// and name, also when the report is read again after a restart.
	NotifyOnMilestone []string `json:"notify_on_milestone,omitempty"`
	// Session ties the task to a named session lineage in its Cwd; nil
	// means the task keeps no session.
	Session *SessionSpec `json:"session,omitempty"`
	// On is a label the gateway that runs the task must carry (its
	// config's cluster.labels; --on): the task waits queued until such a
	// gateway takes it. Empty means any gateway.
	On string `json:"on,omitempty"`
}

// RetryPolicy bounds how often a failed task is tried again. Each failure
// is classified first (see FailureClass): billing and fatal failures are
// never retried; transient ones are retried while attempts remain, and so
// are those that need a diagnosis when the gateway has no diagnoser. Exit
// codes 126 and 127 and cancels are fatal; exit code 75 (EX_TEMPFAIL) is
// transient.
type RetryPolicy struct {
	// MaxAttempts counts the first run; 0 or 1 means no retry.
	MaxAttempts int `json:"max_attempts"`
	// Backoff is the base delay before the second attempt; it doubles
	// for each later one, up to MaxBackoff, with ±25% jitter. Zero means
	// 1s; a zero MaxBackoff means 5m.
	Backoff    Duration `json:"backoff,omitempty"`
	MaxBackoff Duration `json:"max_backoff,omitempty"`
	// TransientPatterns and FatalPatterns are regular expressions matched
	// against the end of the attempt's stderr.
	TransientPatterns []string `json:"transient_patterns,omitempty"`
	FatalPatterns     []string `json:"fatal_patterns,omitempty"`
	// SafeToRepeat says the command may run again after a crash left its
	// outcome unknown (the task was found lost). Without it a lost task is
	// never re-run: it may already have had side effects.
	SafeToRepeat bool `json:"safe_to_repeat,omitempty"`
}

// Progress is the latest progress a task reported. Progress is coalesced:
// only the last snapshot is kept.
type Progress struct {
	// Fraction is done/total in [0,1]; nil when unknown.
	Fraction *float64        `json:"fraction,omitempty"`
	Phase    string          `json:"phase,omitempty"`
	Message  string          `json:"message,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	At       time.Time       `json:"at"`
}

// Milestone is a durable progress mark. Seq grows by one per task.
type Milestone struct {
	Seq     int64           `json:"seq"`
	Name    string          `json:"name"`
	Message string          `json:"message,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	At      time.Time       `json:"at"`
}

// Result is what a finished task produced: a digest of its stdout and, when
// stdout was JSON, the parsed value.
type Result struct {
	StdoutSHA256 string `json:"stdout_sha256,omitempty"`
	StdoutBytes  int64  `json:"stdout_bytes,omitempty"`
	// Stdout is the whole output when it is at most 256 KiB (larger
	// output stays in the task's log file only), and JSON its parsed
	// value when it is one JSON document.
	Stdout  string          `json:"stdout,omitempty"`
	JSON    json.RawMessage `json:"json,omitempty"`
	Summary string          `json:"summary,omitempty"`
	// StdoutPath is the file that holds the whole stdout (the attempt's
	// log) when it is over InlineStdout bytes, for readers that need more
	// than the record keeps: a record near its size limit sheds Stdout
	// and JSON when the task ends. The file lives as long as the task's
	// logs; StdoutSHA256 tells whether it still holds what was printed.
	StdoutPath string `json:"stdout_path,omitempty"`
}

// InlineStdout is the stdout size up to which a Result's Stdout is always
// kept in the task record; above it the record also names the file.
const InlineStdout = 4 << 10

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("1m30s"); it also accepts a number of nanoseconds.
type Duration = duration.Duration
