package flows

import "encoding/json"

// PipelineController is the id of the first-party controller that runs
// workflow files as managed flows (plugins/pipeline).
const PipelineController = "pipeline"

// Invocation asks the pipeline controller to run a workflow file: it is
// the initial state of a flow the controller drives. Everything that
// starts a pipeline flow (the CLI, the scheduler) builds it here, so the
// contract has one definition.
type Invocation struct {
	// File is the workflow file's absolute path; empty when Pipeline is set.
	File string `json:"file,omitempty"`
	// Pipeline is a typed pipeline string ("exec … | where …") run instead
	// of a file, as the one step of PipelineWorkflow.
	Pipeline string `json:"pipeline,omitempty"`
	// Args is a JSON object of provided args; nil means none ({}).
	Args json.RawMessage `json:"args"`
	// Cwd is where relative paths in the workflow resolve.
	Cwd string `json:"cwd"`
	// Env is added to every step's environment, beneath the workflow's
	// and the step's own env (the scheduler passes FLOWGATE_SESSION and
	// the run's identity this way).
	Env map[string]string `json:"env,omitempty"`
	// GateTimeoutMs, if above zero, is how long each gate of the run may
	// wait unanswered: the controller writes the deadline into the gate's
	// wait (Until), and the gateway denies the gate as gate-expired once it
	// passes.
	GateTimeoutMs int64 `json:"gate_timeout_ms,omitempty"`
	// Session, if set, names the agent session lineage every command step
	// of the run belongs to, one lineage step per workflow step (see
	// Step.ResumePrompt and Step.Fresh); empty means no lineage.
	Session string `json:"session,omitempty"`
	// SessionCheck is the shell command asked whether a step's session
	// still exists before it is continued (sdk.SessionSpec.Check); empty
	// means every recorded session is alive.
	SessionCheck string `json:"session_check,omitempty"`
}

// State returns the invocation as a flow's initial state.
func (in Invocation) State() (json.RawMessage, error) {
	if len(in.Args) == 0 {
		in.Args = json.RawMessage("{}")
	}
	return json.Marshal(in)
}
