package sdk

import "time"

// RuntimeAgent is the runtime of a task that runs an AI agent's
// command-line tool. Such a task is resilient by default: when it is
// created without a retry policy it gets AgentRetryPolicy, its network
// drops are transient failures, and a retry after one waits for the
// network to come back (see TaskSpec.Probe).
const RuntimeAgent = "agent"

// Agent retry defaults.
const (
	// AgentMaxAttempts counts the first attempt.
	AgentMaxAttempts = 6
	// AgentBackoff is the base delay before the second attempt.
	AgentBackoff = 4 * time.Second
	// AgentMaxBackoff caps the delay between two attempts.
	AgentMaxBackoff = 120 * time.Second
)

// AgentRetryPolicy is the retry policy of an agent task created without
// one: 6 attempts in all, the first included, after
// min(4s·2^(n-1), 120s) ±25% each. Fatal and billing failures are never
// retried; transient ones and those that need a diagnosis (unknown) are.
func AgentRetryPolicy() *RetryPolicy {
	return &RetryPolicy{MaxAttempts: AgentMaxAttempts, Backoff: Duration(AgentBackoff), MaxBackoff: Duration(AgentMaxBackoff)}
}

// AttemptRecord is what the runner recorded of one attempt of a task
// that failed, or that started after a wait for the network.
type AttemptRecord struct {
	// Attempt is the attempt's number, the first being 1.
	Attempt int `json:"attempt"`
	// Class is how the attempt's failure was classified; empty while it
	// runs or when it did not fail.
	Class FailureClass `json:"class,omitempty"`
	// Offline is how long the network probe found the network down
	// after this attempt failed, before the next attempt was queued.
	Offline Duration `json:"offline,omitempty"`
	// Resumed says this attempt continues the previous attempt's work
	// (its session) after a transient failure and a network check.
	Resumed bool `json:"resumed,omitempty"`
}

// FinishNotify says where a task's finish notifications go. Each
// notification is queued with the status change it reports, in the same
// transaction, and delivered at least once, across gateway restarts,
// once per (task, status): when the task is interrupted (given up on
// while its child may still run) and when it ends. It carries the task's
// record as of that status.
type FinishNotify struct {
	// Command is run by /bin/sh -c with the notification as JSON on
	// stdin; exit status 0 is a delivery.
	Command string `json:"command,omitempty"`
	// Webhook is an http or https URL POSTed the notification as JSON;
	// a 2xx answer is a delivery.
	Webhook string `json:"webhook,omitempty"`
}

// Interruption is a soft give-up: flowgate stopped waiting for a task
// whose no-progress or max budget ran out. The task itself keeps its
// status until its child ends, and then records its real result: an
// interruption never hides a late finish.
type Interruption struct {
	// Reason is "no-progress" or "budget-exceeded".
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	// ChildStillRunning says the child was left running (a no-progress
	// give-up of a task with on_no_progress "keep"); false when it was
	// stopped, and once the task ended: its child is gone then.
	ChildStillRunning bool `json:"child_still_running"`
}

// What a task does when its no-progress budget runs out
// (TaskSpec.OnNoProgress).
const (
	// NoProgressStop stops the child: the default.
	NoProgressStop = "stop"
	// NoProgressKeep leaves the child running: the task is marked
	// interrupted and still records how the child ends.
	NoProgressKeep = "keep"
)

// NoticeInterrupted and NoticeAborted are the statuses a finish
// notification gives for a task's interruption and for its cancel; the
// others are the task's terminal status.
const (
	NoticeInterrupted = "interrupted"
	NoticeAborted     = "aborted"
)
