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
