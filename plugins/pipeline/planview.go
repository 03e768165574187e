package pipeline

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// passEnd is where a pass leaves the flow, as the plan shows it: the
// step it stands at (a state key: a top-level step id, or a path under
// one such as "fan/a" or "sub>build") and how that step stands.
type passEnd struct {
	step  string
	phase sdk.NodePhase
}

// keepPlan records the plan, with its view, as the pass leaves the flow
// (end); created are the tasks the write that carries it creates.
func (r *run) keepPlan(end passEnd, created []sdk.TaskRequest) error {
	p := planOf(r.wf, r.st.Results)
	r.viewPlan(&p, end, created)
	return r.st.plan(p)
}

// viewPlan fills in the view of each node of p, the plan of the pass's
// workflow (sdk.NodeView): type, detail, condition and refs as `flowgate
// pipeline graph` draws them, and where each step stands, from its
// result, the pass's end and, in a continuation, the steps it reuses.
// The plan is written in the write the pass makes anyway, so a step's
// phase never costs a write of its own; a loop's counts and a branch's
// phase are as of the flow's last write.
func (r *run) viewPlan(p *sdk.Plan, end passEnd, created []sdk.TaskRequest) {
	var reused []string
	if c := r.flow.Continuation; c != nil {
		reused = c.Reuse
	}
	var prev map[string]sdk.NodeView
	if r.loopUncounted() {
		prev = keptPlan(r.st)
	}
	tasks := func(label string) []sdk.NodePhase {
		var out []sdk.NodePhase
		for key, t := range r.tasks {
			if taskOf(r.flow.ID, key, label) {
				out = append(out, taskPhase(t))
			}
		}
		for _, req := range created {
			if taskOf(r.flow.ID, req.IdempotencyKey, label) {
				out = append(out, sdk.PhaseRunning)
			}
		}
		return out
	}
	fillView(p, r.wf, r.looks.of(r.wf, string(r.st.raw["args"]), r.args), r.st.Results, end, reused, r.loops, prev, tasks)
}

// loopUncounted reports whether the workflow has a top-level for_each
// step this pass did not count, whose counts only the plan the state
// holds knows: only then is that plan decoded, which costs in proportion
// to the plan at every write of every flow.
func (r *run) loopUncounted() bool {
	for _, s := range r.wf.Steps {
		if _, counted := r.loops[s.ID]; s.ForEach != nil && !counted {
			return true
		}
	}
	return false
}

// fillView is viewPlan over its parts, so that CheckBound can size the
// largest plan a workflow makes: looks are what each node shows of its
// step (looksOf), loops the item counts of the for_each steps the pass
// walked, prev the plan the state held (its counts stand for loops the
// pass did not walk), and tasks the phases of the tasks of a label (nil:
// none).
func fillView(p *sdk.Plan, wf *flows.Workflow, looks []nodeLook, results map[string]flows.StepResult, end passEnd, reused []string,
	loops map[string]sdk.NodeItems, prev map[string]sdk.NodeView, tasks func(label string) []sdk.NodePhase) {
	at := topStep(wf, end.step)
	for i := range p.Nodes {
		n, s, l := &p.Nodes[i], &wf.Steps[i], looks[i]
		n.Type, n.Detail, n.Condition, n.Refs = l.typ, l.detail, l.condition, l.refs
		res, done := results[s.ID]
		n.Phase = resultPhase(res, done, slices.Contains(reused, s.ID))
		if s.ID == at && (end.phase != sdk.PhaseRunning || !done) {
			n.Phase = end.phase
		}
		if s.Parallel != nil {
			for _, b := range s.Parallel.Branches {
				br, ok := results[b.ID]
				nb := sdk.NodeBranch{ID: b.ID, Pipeline: b.Pipeline != "", Phase: resultPhase(br, ok, false)}
				if !ok && tasks != nil {
					nb.Phase = labelPhase(tasks(s.ID + "/" + b.ID))
				}
				n.Branches = append(n.Branches, nb)
			}
		}
		if s.ForEach != nil && n.Phase != sdk.PhaseSkipped && n.Phase != sdk.PhasePending {
			n.Items = loopItems(loops, prev, s.ID, n.Phase)
		}
	}
}

// countLoop records the item counts of for_each step id of frame fr for
// the plan (a sub-workflow's loops are no node of it).
func (r *run) countLoop(fr *frame, id string, n sdk.NodeItems) {
	if !fr.isTop() {
		return
	}
	if r.loops == nil {
		r.loops = map[string]sdk.NodeItems{}
	}
	r.loops[id] = n
}

// Bounds of a node's view as the plan keeps it: its condition in runes,
// its detail in bytes of JSON (so that CheckBound can size it without the
// run's args, which fill in the detail's templates).
const (
	maxConditionRunes = 200
	maxViewDetail     = 256
)

// capDetail is detail cut, a quarter of its runes at a time, until its
// JSON takes at most maxViewDetail bytes.
func capDetail(detail string) string {
	for {
		b, _ := json.Marshal(detail) // a string always encodes
		if len(b) <= maxViewDetail {
			return detail
		}
		r := []rune(detail)
		detail = string(r[:len(r)*3/4]) + "…"
	}
}

// resultPhase is the phase of a step with result res (done: it has one);
// reused marks a step a continuation reuses.
func resultPhase(res flows.StepResult, done, reused bool) sdk.NodePhase {
	switch {
	case !done:
		return sdk.PhasePending
	case res.Skipped:
		return sdk.PhaseSkipped
	case res.Error:
		return sdk.PhaseFailed
	case res.Approved != nil && !*res.Approved:
		return sdk.PhaseCancelled
	case reused:
		return sdk.PhaseReused
	}
	return sdk.PhaseSucceeded
}

// loopItems is the item counts of for_each step id in phase: as this pass
// counted them, else as the plan had them; all done once it succeeded.
func loopItems(loops map[string]sdk.NodeItems, prev map[string]sdk.NodeView, id string, phase sdk.NodePhase) *sdk.NodeItems {
	it, ok := loops[id]
	if !ok {
		p, had := prev[id]
		if !had || p.Items == nil {
			return nil
		}
		it = *p.Items
	}
	if phase == sdk.PhaseSucceeded || phase == sdk.PhaseReused {
		it = sdk.NodeItems{Total: it.Total, Done: it.Total}
	}
	return &it
}

// labelPhase is how a branch stands from the phases of its tasks: failed
// when one failed, running while one runs, succeeded when all did,
// pending with none.
func labelPhase(ps []sdk.NodePhase) sdk.NodePhase {
	switch {
	case len(ps) == 0:
		return sdk.PhasePending
	case slices.Contains(ps, sdk.PhaseFailed):
		return sdk.PhaseFailed
	case slices.Contains(ps, sdk.PhaseRunning):
		return sdk.PhaseRunning
	}
	return sdk.PhaseSucceeded
}

// taskPhase is a task's status as a node phase.
func taskPhase(t *sdk.Task) sdk.NodePhase {
	switch {
	case !t.Status.Terminal():
		return sdk.PhaseRunning
	case t.Status == sdk.TaskSucceeded:
		return sdk.PhaseSucceeded
	}
	return sdk.PhaseFailed
}

// taskOf reports whether the task keyed key (see taskKey) belongs to the
// step or branch label: its own, or one of its stages' or sub-steps'.
func taskOf(flowID, key, label string) bool {
	rest, ok := strings.CutPrefix(key, flowID+":"+label)
	return ok && (strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "/"))
}

// topStep is the top-level step of wf that state key key is under ("" for
// none).
func topStep(wf *flows.Workflow, key string) string {
	for _, s := range wf.Steps {
		if rest, ok := strings.CutPrefix(key, s.ID); ok && (rest == "" || rest[0] == '/' || rest[0] == '>') {
			return s.ID
		}
	}
	return ""
}

// keptPlan is the view of each node of the plan the state holds, by id;
// none when it has no readable plan.
func keptPlan(st *state) map[string]sdk.NodeView {
	var p sdk.Plan
	if err := json.Unmarshal(st.raw[sdk.PlanKey], &p); err != nil {
		return nil
	}
	out := make(map[string]sdk.NodeView, len(p.Nodes))
	for _, n := range p.Nodes {
		out[n.ID] = n.NodeView
	}
	return out
}

// truncateRunes cuts s to at most n runes, ending in "…" when cut.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
