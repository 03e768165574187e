package pipeline

import (
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// planOf is the plan snapshot of workflow wf with results: one node per
// top-level step, succeeded when it ran (or was skipped by its
// condition), failed when it failed and its on_error let the run go on,
// unfinished otherwise. A step depends on every earlier step it refers
// to (a $id ref or a LOBSTER_STEP_<ID>_ variable anywhere in it), and an
// input step without stdin on every earlier step (its subject is the
// last one that ran). The definition hash is of the workflow file as it
// is now; it is empty when the file cannot be read, which refuses a
// continuation.
func planOf(wf *flows.Workflow, results map[string]flows.StepResult) sdk.Plan {
	p := sdk.Plan{Controller: Name + "@" + Version, DefinitionFile: wf.File}
	if b, err := os.ReadFile(wf.File); err == nil {
		p.DefinitionHash = sdk.HashDefinition(b)
	}
	deps := workflowDeps(wf)
	for i, s := range wf.Steps {
		n := sdk.PlanNode{ID: s.ID, DependsOn: slices.Clone(deps[i])}
		if res, ok := results[s.ID]; ok {
			n.Status = sdk.NodeSucceeded
			if res.Error {
				n.Status = sdk.NodeFailed
			}
		}
		p.Nodes = append(p.Nodes, n)
	}
	return p
}

// continued prepares the state of a continuation's first pass over
// workflow wf: the results of the steps the continuation reruns (with
// their parallel branches and sub-workflow steps), their gate decisions
// and deadlines are dropped so they run again, their former stdout is
// kept as prior output (FLOWGATE_PRIOR_OUTPUT), and the state is marked so
// later passes leave it alone. Reused steps keep their results and never
// run again.
func (s *state) continued(c *sdk.Continuation, wf *flows.Workflow) error {
	if c == nil || s.raw[continuedKey] != nil {
		return nil
	}
	if err := s.loadAll(); err != nil { // every result is written again below
		return err
	}
	rerun := map[string]bool{}
	for _, id := range c.Rerun {
		rerun[id] = true
	}
	for _, st := range wf.Steps {
		if !rerun[st.ID] {
			continue
		}
		if res, ok := s.Results[st.ID]; ok && res.Stdout != nil {
			s.Prior[st.ID] = tail(*res.Stdout, maxPrior)
		}
		ids := []string{st.ID}
		if st.Parallel != nil {
			for _, b := range st.Parallel.Branches {
				ids = append(ids, b.ID)
			}
		}
		for k := range s.Results {
			if slices.Contains(ids, k) || strings.HasPrefix(k, st.ID+">") {
				delete(s.Results, k)
			}
		}
		delete(s.Decisions, st.ID)
		delete(s.GateUntil, st.ID)
	}
	for key, v := range map[string]any{"results": s.Results, legacyDecisionsKey: s.Decisions, "gate_until": s.GateUntil, priorKey: s.Prior} {
		if key == legacyDecisionsKey && s.raw[key] == nil {
			continue // only a state of before Flow.Decisions has them
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		s.raw[key] = b
	}
	s.raw[continuedKey] = json.RawMessage("true")
	return nil
}

// PriorOutputEnv is the variable that gives a step a continuation reruns
// the stdout it printed in the source run (its last maxPrior bytes).
const PriorOutputEnv = "FLOWGATE_PRIOR_OUTPUT"

// maxPrior bounds a prior output: it travels in the flow's state and in
// an environment variable.
const maxPrior = 16 << 10

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// State keys of a continuation: the mark that its state was prepared, and
// the prior stdout of the steps it reruns.
const (
	continuedKey = "continued"
	priorKey     = "prior_output"
)

// plan records p as the flow's plan snapshot (sdk.PlanKey).
func (s *state) plan(p sdk.Plan) error {
	b, err := json.Marshal(p)
	s.raw[sdk.PlanKey] = b
	return err
}
