package sdk

import (
	"crypto/sha256"
	"encoding/hex"
)

// A chain is a flow and the flow that continues it. Every flow belongs to
// one (ChainID is its own id for a first run); a chain holds at most two
// runs: the initial run and one continuation, which the gateway accepts
// only from a failed or partial first run. docs/recovery.md explains the
// rules.

// PlanKey is the key of a flow's state under which a controller keeps the
// flow's plan: the nodes of its work, their dependencies and how each
// ended (a Plan). A flow without one cannot be continued: the gateway
// would not know what succeeded.
const PlanKey = "plan"

// Plan is a flow's plan snapshot: what the controller ran and how far it
// got. Controllers keep it current in their state under PlanKey.
type Plan struct {
	// Controller names the controller and version that ran the plan
	// ("pipeline@0.1.0", the name and version its Info reports); a
	// continuation made under another is refused.
	Controller string `json:"controller,omitempty"`
	// DefinitionFile is the file the plan was made from, if any, and
	// DefinitionHash its content's SHA-256 in hex: a continuation is
	// refused when the file's content now hashes differently.
	DefinitionFile string `json:"definition_file,omitempty"`
	DefinitionHash string `json:"definition_hash,omitempty"`
	// Nodes are the units of work, in plan order.
	Nodes []PlanNode `json:"nodes"`
}

// PlanNode is one unit of work of a plan. Its ID is stable across the
// runs of a chain.
type PlanNode struct {
	ID        string   `json:"id"`
	DependsOn []string `json:"depends_on,omitempty"`
	// Status is NodeSucceeded, NodeFailed, or empty for a node that has
	// not finished (never ran, or was still running). A continuation
	// reads it to decide what to reuse.
	Status NodeStatus `json:"status,omitempty"`
	// NodeView says how to show the node while the flow runs (the run
	// center's step graph); a continuation reads none of it. Every field
	// is optional: a plan without them (an older record, another
	// controller) still loads and is shown by its ids.
	NodeView
}

// NodeStatus is how a plan node ended.
type NodeStatus string

// Node statuses. A node with neither has not finished.
const (
	NodeSucceeded NodeStatus = "succeeded"
	NodeFailed    NodeStatus = "failed"
)

// Assignment is what a continuation asks of one node that did not finish
// in the source run (or that the continuation reruns because it depends
// on one). A node keeps its id.
type Assignment struct {
	Node string `json:"node"`
	// Instruction is free text for the controller or the person doing
	// the work; empty means run as planned.
	Instruction string `json:"instruction,omitempty"`
	// DependsOn, when set, replaces the node's dependencies in the
	// continuation; the revised graph must stay acyclic.
	DependsOn *[]string `json:"depends_on,omitempty"`
}

// ContinueRequest asks for the one continuation of a failed or partial
// flow. Submitting the same request twice returns the same successor.
type ContinueRequest struct {
	// ExpectedRevision is the source flow's revision the caller read.
	ExpectedRevision int64  `json:"expected_revision"`
	Reason           string `json:"reason"`
	Review           string `json:"review,omitempty"`
	// Assignments cover the nodes that did not finish; nil gives each its
	// planned work, recorded explicitly in the receipt.
	Assignments []Assignment `json:"assignments,omitempty"`
	// FromStep, when set, is the operator's explicit "rerun from here":
	// this node and every node after it in plan order rerun, succeeded or
	// not, and the source may also have succeeded. The run is still the
	// chain's one continuation, recorded like any other.
	FromStep string `json:"from_step,omitempty"`
	// Controller, when set, is the controller the caller would run the
	// continuation under, as name@version ("pipeline@0.1.0"); it must
	// match the plan's.
	Controller string `json:"controller,omitempty"`
	// By names who asked, for the source flow's history (a run center
	// token's name, or --by); empty records the operator. It is not part
	// of the request's identity: the same request from someone else
	// returns the same successor.
	By string `json:"by,omitempty"`
}

// Continuation is the receipt of an accepted continuation, stored on the
// successor flow in the transaction that accepted it, before any work.
type Continuation struct {
	ChainID        string       `json:"chain_id"`
	SourceFlowID   string       `json:"source_flow_id"`
	SourceRevision int64        `json:"source_revision"`
	Reason         string       `json:"reason"`
	Review         string       `json:"review,omitempty"`
	FromStep       string       `json:"from_step,omitempty"`
	Assignments    []Assignment `json:"assignments"`
	// Reuse lists the nodes whose source results stand; Rerun the nodes
	// that run again (unfinished ones and successful descendants of a
	// failed node), in plan order.
	Reuse []string `json:"reuse"`
	Rerun []string `json:"rerun"`
}

// HashDefinition is the content hash a plan records for its definition
// file (Plan.DefinitionHash): SHA-256 in hex.
func HashDefinition(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
