package pipeline

import (
	"fmt"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// nodeLook is what a plan node's view shows of its step alone: its type,
// detail, condition and refs (sdk.NodeView), which depend on the
// workflow and the run's args only.
type nodeLook struct {
	typ, detail, condition string
	refs                   []sdk.NodeRef
}

// looksOf draws the look of each step of wf, in order, as `flowgate
// pipeline graph` draws it (flows.GraphModel) with args.
func looksOf(wf *flows.Workflow, args map[string]any) []nodeLook {
	nodes, edges := flows.GraphModel(wf, args)
	refs := map[string][]sdk.NodeRef{}
	for _, e := range edges {
		if e.Label != "next" {
			refs[e.To] = append(refs[e.To], sdk.NodeRef{From: e.From, Label: e.Label})
		}
	}
	looks := make([]nodeLook, len(wf.Steps))
	for i, s := range wf.Steps {
		l := nodeLook{typ: nodes[i].Type, detail: nodes[i].Detail, refs: refs[s.ID]}
		if l.typ == "approval" || l.typ == "input" {
			// A gate's prompt reads filled in, as the gate shows it.
			l.detail = flows.ResolveArgsTemplate(l.detail, args)
		}
		l.detail = capDetail(l.detail)
		if s.When != nil {
			l.condition = truncateRunes(fmt.Sprint(s.When), maxConditionRunes)
		}
		looks[i] = l
	}
	return looks
}

// lookMemo keeps the looks of each loaded workflow by the args they were
// drawn with: every write of a running flow keeps its plan, and drawing
// the graph model of the whole workflow again cost in proportion to its
// steps at every event. A workflow is the one flows.Cache hands out
// unchanged while its files are, so an edited file is drawn anew; a
// pipeline string's (no file) is parsed again at each pass and never
// kept. The looks are shared: do not change them.
type lookMemo struct{ memo[lookKey, []nodeLook] }

// lookKey is a workflow and the args of a run of it, as its state holds
// them (the args the run resolves from them with the workflow's
// defaults are the same for the same two).
type lookKey struct {
	wf   *flows.Workflow
	args string
}

// of returns the looks of wf with args, the run's args resolved from
// stateArgs, the state's.
func (m *lookMemo) of(wf *flows.Workflow, stateArgs string, args map[string]any) []nodeLook {
	if m == nil || wf.File == "" {
		return looksOf(wf, args)
	}
	k := lookKey{wf: wf, args: stateArgs}
	if looks, ok := m.get(k); ok {
		return looks
	}
	looks := looksOf(wf, args)
	m.put(k, looks)
	return looks
}
