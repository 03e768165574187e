package sdk

// NodeView is what a viewer shows of a plan node while its flow runs: the
// kind of work, what it runs, its condition, where it stands and, for a
// loop, how many items got how far. A controller that keeps it current
// in the same write that records its progress lets the run center draw a
// live step graph without reading the controller's private state.
type NodeView struct {
	// Type is the kind of work: for a pipeline step parallel, for_each,
	// workflow, pipeline, run, approval, input or step, as `flowgate
	// pipeline graph` names them. Empty means plain work.
	Type string `json:"type,omitempty"`
	// Detail is what the node runs: a command, a pipeline's stages one a
	// line, a gate's prompt, a loop's items expression. A few short lines.
	Detail string `json:"detail,omitempty"`
	// Condition is the node's when: (or condition:) expression, if any:
	// a skipped node was skipped because it was false.
	Condition string `json:"condition,omitempty"`
	// Refs are the earlier nodes whose output this one reads, each with
	// how ("stdin", "for_each", "when: <condition>"); the node after
	// another in plan order follows it without a ref.
	Refs []NodeRef `json:"refs,omitempty"`
	// Branches are a parallel node's branches, side by side.
	Branches []NodeBranch `json:"branches,omitempty"`
	// Items counts a loop's items by how far they got; nil for a node
	// that is no loop or whose items are not known yet. Counts, not one
	// entry per item, keep the plan small however many items there are.
	Items *NodeItems `json:"items,omitempty"`
	// Phase is where the node stands; empty reads as PhasePending.
	Phase NodePhase `json:"phase,omitempty"`
}

// NodeRef is a data or condition reference from an earlier node.
type NodeRef struct {
	From  string `json:"from"`
	Label string `json:"label"`
}

// NodeBranch is one branch of a parallel node.
type NodeBranch struct {
	ID string `json:"id"`
	// Pipeline is set for a branch that runs a pipeline: text.
	Pipeline bool      `json:"pipeline,omitempty"`
	Phase    NodePhase `json:"phase,omitempty"`
}

// NodeItems counts the items of a loop node: Total once they are known,
// and how many are Done, Failed and Running; the rest are pending.
type NodeItems struct {
	Total   int `json:"total"`
	Done    int `json:"done"`
	Failed  int `json:"failed"`
	Running int `json:"running"`
}

// NodePhase is where a plan node stands.
type NodePhase string

// Node phases. A continuation's successor shows the nodes it reuses from
// its source as PhaseReused; PhaseSkipped is a node whose condition was
// false.
const (
	PhasePending   NodePhase = "pending"
	PhaseRunning   NodePhase = "running"
	PhaseWaiting   NodePhase = "waiting"
	PhaseSucceeded NodePhase = "succeeded"
	PhaseFailed    NodePhase = "failed"
	PhaseSkipped   NodePhase = "skipped"
	PhaseReused    NodePhase = "reused"
	PhaseCancelled NodePhase = "cancelled"
)
