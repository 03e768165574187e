package flows

// Workflow is a validated workflow file (lobster-format §3.1). Load and
// Parse return it; the zero value is not a valid workflow.
type Workflow struct {
	// File is the path the workflow was loaded from (absolute for Load, the
	// given name for Parse). Sub-workflow paths are relative to its directory.
	File string
	// Name and Description are informational only.
	Name, Description string
	// Args are the declared args in file order. Only defaults are used at
	// run time; undeclared args are still accepted by ResolveArgs.
	Args []Arg
	// Env is set for every step; values are templates (args and step refs).
	// Non-string values in the file are ignored, as in the reference.
	Env map[string]string
	// Cwd is the default working directory of steps; only ${arg} templates
	// apply. Empty means the executor's own working directory.
	Cwd string
	// StrictRefs (strict_refs: true) refuses, at load, any arg or step
	// ref pasted into a shell command (see Splices); steps read the
	// values from their environment instead.
	StrictRefs bool
	// CostLimit is nil when the file sets no cost_limit.
	CostLimit *CostLimit
	// Steps run in order; never empty in a valid workflow.
	Steps []Step

	// pipelineErrs are the pipeline: texts that do not parse.
	pipelineErrs errList
}

// PipelineErrors reports each pipeline: text of wf and of its loaded
// sub-workflows that does not parse, as *Error values joined (file:line,
// Lobster's "Workflow step X pipeline parse failed: …"), or nil. Load
// accepts such a file, as Lobster does: the step fails when it runs, so
// its on_error applies; validate calls this to report them before a run.
func (wf *Workflow) PipelineErrors() error {
	return wf.appendPipelineErrs(nil).err()
}

func (wf *Workflow) appendPipelineErrs(errs errList) errList {
	errs = append(errs, wf.pipelineErrs...)
	for _, s := range wf.Steps {
		if s.Sub != nil {
			errs = s.Sub.appendPipelineErrs(errs)
		}
	}
	return errs
}

// Arg is one declared workflow arg.
type Arg struct {
	Name string
	// Default is the decoded default (string, float64, bool, nil,
	// []any or map[string]any); meaningful only when HasDefault is true.
	Default     any
	HasDefault  bool
	Description string
}

// CostLimit is the workflow's LLM-spend guard.
type CostLimit struct {
	MaxUSD float64
	// Action is "warn" or "stop"; empty means the file did not say, which
	// the reference treats as "warn".
	Action string
}

// Step is one workflow step (lobster-format §3.2). Exactly one of Run,
// Pipeline, Workflow, Parallel and ForEach is set for an executing step; a step with
// none of them is a gate (Approval or Input) over its stdin.
type Step struct {
	ID string
	// Line and Column locate the step in File, for executor error messages.
	Line, Column int
	// Run is the shell command (run: or its alias command:; run wins).
	Run string
	// Pipeline is a typed Lobster pipeline ("exec … | where …", §14).
	// ParsePipeline parses it as written; its refs are then resolved
	// word by word (ResolveStages), never pasted into the text.
	Pipeline string
	// Workflow is the sub-workflow path template; WorkflowArgs its args
	// (string values are templates, others are passed as they are).
	Workflow     string
	WorkflowArgs map[string]any
	// Sub is the loaded sub-workflow when Load could resolve Workflow
	// without step refs or args; nil otherwise (see LoadSub).
	Sub      *Workflow
	Parallel *Parallel
	ForEach  *ForEach
	// Approval is non-nil when the step is an approval gate.
	Approval *Approval
	// Input is non-nil when the step is an input gate.
	Input *Input
	// Stdin is the step's input: nil for none, a string (a strict ref if
	// IsStepRef reports so, else a template) or any other decoded value.
	Stdin any
	// When is the step's condition (when:, or its alias condition:): nil,
	// a bool or an expression string. Conditions are checked at load time.
	When any
	// TimeoutMs is the per-attempt timeout; zero means none.
	TimeoutMs int
	// OnError is "stop", "continue" or "skip_rest"; never empty after load.
	OnError string
	// Retry always holds the effective policy (defaults when absent).
	Retry Retry
	// Env overrides the workflow env for this step; values are templates.
	Env map[string]string
	// Cwd overrides the workflow cwd; only ${arg} templates apply.
	Cwd string
	// ResumePrompt (resume_prompt) is the prompt a command step gets
	// instead of its own when it continues an interrupted agent session;
	// empty means none. Fresh (fresh: true) makes the step start a new
	// session every time. Both matter only in a run with a session.
	ResumePrompt string
	Fresh        bool
}

// Kind names what the step executes, in the reference's priority order:
// "parallel", "workflow", "pipeline", "for_each", "run", "input",
// "approval" or "none".
func (s *Step) Kind() string {
	switch {
	case s.Parallel != nil:
		return "parallel"
	case s.Workflow != "":
		return "workflow"
	case s.Pipeline != "":
		return "pipeline"
	case s.ForEach != nil:
		return "for_each"
	case s.Run != "":
		return "run"
	case s.Input != nil:
		return "input"
	case s.Approval != nil:
		return "approval"
	}
	return "none"
}

// Parallel is a parallel block (lobster-format §7.5).
type Parallel struct {
	// Wait is "all" (default) or "any".
	Wait string
	// TimeoutMs bounds the whole block; zero means none.
	TimeoutMs int
	Branches  []Branch
}

// Branch is one parallel branch; its ID is also a step id for refs. It
// runs either Run, a shell command, or Pipeline, a typed pipeline.
type Branch struct {
	ID           string
	Line, Column int
	Run          string
	Pipeline     string
	Env          map[string]string
	Cwd          string
	Stdin        any
}

// ForEach is a loop over the array a ref resolves to (lobster-format §7.4).
type ForEach struct {
	// Expr is the for_each expression, normally a "$step.path" ref.
	Expr string
	// ItemVar and IndexVar default to "item" and "index".
	ItemVar, IndexVar string
	// BatchSize is how many items run at once, batch after batch; zero
	// (not given) puts every item in one batch. PauseMs is slept before
	// each item of a batch after the first: with BatchSize 1, before item
	// i when i > 0, as in Lobster, which runs items one at a time.
	BatchSize int
	PauseMs   float64
	// Steps run once per item; they use Run or Pipeline (no gates, no
	// nesting).
	Steps []Step
}

// Approval is an approval gate's configuration (lobster-format §8).
type Approval struct {
	// Prompt is empty when the file gave true or "required"; the executor
	// then uses "Approve <id>?" (see ApprovalPrompt).
	Prompt string
	// Items and Preview are meaningful when HasItems/HasPreview are true.
	Items                    any
	HasItems                 bool
	Preview                  string
	HasPreview               bool
	InitiatedBy              string
	RequiredApprover         string
	RequireDifferentApprover *bool
}

// Input is an input gate (lobster-format §9).
type Input struct {
	Prompt         string
	ResponseSchema map[string]any
	// Defaults is nil when absent.
	Defaults any
}

// Retry is a step's retry policy (lobster-format §12).
type Retry struct {
	// Max is the total number of attempts, at least 1.
	Max int
	// Backoff is "fixed" or "exponential".
	Backoff    string
	DelayMs    float64
	MaxDelayMs float64
	Jitter     bool
}

// DefaultRetry is the policy of a step without retry: one attempt.
func DefaultRetry() Retry {
	return Retry{Max: 1, Backoff: "fixed", DelayMs: 1000, MaxDelayMs: 30000}
}

// ApprovalPrompt returns the prompt an approval gate on step s shows when
// the step's own output does not carry one.
func ApprovalPrompt(s *Step) string {
	if s.Approval != nil && s.Approval.Prompt != "" {
		return s.Approval.Prompt
	}
	return "Approve " + s.ID + "?"
}
