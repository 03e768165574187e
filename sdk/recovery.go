package sdk

import "time"

// FailureClass is how a failed attempt of a task was judged before any
// retry. The runner classifies every failure; the class decides whether
// the task is retried, diagnosed or stopped.
type FailureClass string

const (
	// FailureBilling: the task's output names a billing code
	// (insufficient_quota, credit_balance_too_low, …). It is never
	// retried nor diagnosed, and its chain is marked billing-exhausted.
	FailureBilling FailureClass = "billing"
	// FailureFatal: the command cannot succeed as given (not found, not
	// executable, cancelled, out of budget, a fatal pattern). Never
	// retried.
	FailureFatal FailureClass = "fatal"
	// FailureTransient: worth another attempt after a backoff (HTTP 429,
	// exit 75, a transient pattern), while the retry policy allows.
	FailureTransient FailureClass = "transient"
	// FailureStartup: a DNS failure or a refused connection before the
	// task reported any progress, so no child run was created. Retried
	// once in place.
	FailureStartup FailureClass = "startup"
	// FailureNeedsDiagnosis: anything else, mid-run disconnects included.
	// With a diagnoser configured, its advice decides; without one, the
	// task's retry policy does.
	FailureNeedsDiagnosis FailureClass = "needs_diagnosis"
)

// Recommendation is what a diagnoser advises.
type Recommendation string

const (
	// RecommendRetry allows one in-place retry of the node in this run.
	RecommendRetry Recommendation = "retry"
	// RecommendRevise is stored and shown; it never executes by itself.
	RecommendRevise Recommendation = "revise"
	// RecommendStop ends the task as failed.
	RecommendStop Recommendation = "stop"
)

// Diagnosis states.
const (
	// DiagnosisRunning: the diagnoser was started and has not answered. A
	// gateway that finds this state after a restart marks it interrupted.
	DiagnosisRunning = "running"
	// DiagnosisDone: the diagnoser answered with valid advice.
	DiagnosisDone = "done"
	// DiagnosisInvalid: the answer was not the expected JSON.
	DiagnosisInvalid = "invalid"
	// DiagnosisFailed: the diagnoser could not run or exited non-zero.
	DiagnosisFailed = "failed"
	// DiagnosisTimedOut: the diagnoser ran past its timeout.
	DiagnosisTimedOut = "timed_out"
	// DiagnosisCancelled: the gateway stopped while the diagnoser ran.
	DiagnosisCancelled = "cancelled"
	// DiagnosisInterrupted: a gateway restarted while the diagnoser ran;
	// it is not resumed.
	DiagnosisInterrupted = "interrupted"
)

// Diagnosis is a diagnoser's advice about one failed attempt. It is
// advice, never execution authority: only a valid retry recommendation
// changes what happens (one in-place retry per node per run), and no
// other state ever falls back to a blind retry.
type Diagnosis struct {
	// Attempt is the failed attempt diagnosed.
	Attempt int `json:"attempt"`
	// State is one of the Diagnosis* states.
	State string `json:"state"`
	// Evidence, Uncertainty and Recommendation are the diagnoser's
	// answer, when State is done.
	Evidence       string         `json:"evidence,omitempty"`
	Uncertainty    string         `json:"uncertainty,omitempty"`
	Recommendation Recommendation `json:"recommendation,omitempty"`
	// Error says why a diagnosis that is not done failed.
	Error string `json:"error,omitempty"`
	// Action says what flowgate did with the advice ("retried in place",
	// "stopped: …").
	Action    string    `json:"action,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

// Usage is what a task, a flow or a chain reported using, summed over its
// usage reports. It counts reported usage only: a report that leaves out
// the tokens or the cost adds nothing to them and is not counted in
// TokenReports or CostReports, and a nil *Usage means nothing was
// reported at all, never zero.
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Cost         float64 `json:"cost"`
	TokenReports int64   `json:"token_reports"`
	CostReports  int64   `json:"cost_reports"`
}

// Tokens is the sum of input and output tokens.
func (u *Usage) Tokens() int64 {
	if u == nil {
		return 0
	}
	return u.InputTokens + u.OutputTokens
}

// Add returns u plus v; either may be nil (nothing reported). The sum is
// nil only when both are.
func (u *Usage) Add(v *Usage) *Usage {
	if u == nil && v == nil {
		return nil
	}
	var s Usage
	for _, x := range []*Usage{u, v} {
		if x != nil {
			s.InputTokens += x.InputTokens
			s.OutputTokens += x.OutputTokens
			s.Cost += x.Cost
			s.TokenReports += x.TokenReports
			s.CostReports += x.CostReports
		}
	}
	return &s
}

// Budget is a chain's soft usage budget. A zero field means no limit on
// that measure. It counts reported usage only and cannot stop calls that
// are already running.
type Budget struct {
	Tokens int64   `json:"tokens,omitempty"`
	Cost   float64 `json:"cost,omitempty"`
}

// Exceeded says which limit of b usage u reached, or "" when none is
// reached (or b is nil).
func (b *Budget) Exceeded(u *Usage) string {
	switch {
	case b == nil || u == nil:
		return ""
	case b.Tokens > 0 && u.Tokens() >= b.Tokens:
		return "tokens"
	case b.Cost > 0 && u.Cost >= b.Cost:
		return "cost"
	}
	return ""
}
