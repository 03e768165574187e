package pipeline

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/flowgate/flowgate/flows"
)

// depsMemo keeps each workflow's step dependencies (workflowDeps) by the
// loaded workflow, which flows.Cache hands out unchanged while its files
// are: every write of a running flow keeps its plan, and finding the
// dependencies encodes every step of the workflow to search its text, a
// cost that grew with the steps at every event of every step. A pipeline
// string's workflow (no file) is parsed again at each pass, so it is
// never kept.
var depsMemo memo[*flows.Workflow, [][]string]

// workflowDeps is deps of each step of wf, in order, computed once per
// loaded workflow. The lists are shared: copy one before changing it.
func workflowDeps(wf *flows.Workflow) [][]string {
	if deps, ok := depsMemo.get(wf); ok {
		return deps
	}
	refs := newStepRefs(wf.Steps)
	deps := make([][]string, len(wf.Steps))
	for i := range wf.Steps {
		deps[i] = refs.deps(i)
	}
	if wf.File != "" {
		depsMemo.put(wf, deps)
	}
	return deps
}

// stepRefs finds the earlier steps a step refers to, by a $id ref (the
// id after "$" or "${", ending at a word boundary) or a LOBSTER_STEP_<ID>_
// variable anywhere in the step. It looks up what follows each "$" and
// each "LOBSTER_STEP_" in the step's text among the workflow's ids, so a
// plan costs time in proportion to its steps, not to their square: the
// plan is kept on every write of a running flow.
type stepRefs struct {
	steps []flows.Step
	// pos is each step's index by id, env by its variable prefix
	// (flows.RefEnvName); idLen and envLen are the longest of each.
	pos           map[string]int
	env           map[string][]int
	idLen, envLen int
}

func newStepRefs(steps []flows.Step) *stepRefs {
	x := &stepRefs{steps: steps, pos: make(map[string]int, len(steps)), env: make(map[string][]int, len(steps))}
	for i, s := range steps {
		if _, dup := x.pos[s.ID]; !dup {
			x.pos[s.ID] = i
		}
		name := flows.RefEnvName(s.ID, "")
		x.env[name] = append(x.env[name], i)
		x.idLen, x.envLen = max(x.idLen, len(s.ID)), max(x.envLen, len(name))
	}
	return x
}

// deps lists, in file order, the steps before step i that it refers to,
// or every step before it when its text cannot be had or it is an input
// step without stdin (its subject is the last step that ran).
func (x *stepRefs) deps(i int) []string {
	s := x.steps[i]
	text, err := json.Marshal(s)
	if err != nil || (s.Kind() == "input" && s.Stdin == nil) {
		var deps []string
		for _, e := range x.steps[:i] {
			deps = append(deps, e.ID)
		}
		return deps
	}
	hit := map[int]bool{}
	x.refs(text, i, hit)
	x.vars(text, i, hit)
	order := slices.Sorted(maps.Keys(hit))
	deps := make([]string, 0, len(order))
	for _, j := range order {
		deps = append(deps, x.steps[j].ID)
	}
	if len(deps) == 0 {
		return nil
	}
	return deps
}

// refs marks in hit the steps before i that a $id or ${id ref in text
// names, the id ending at a word boundary.
func (x *stepRefs) refs(text []byte, i int, hit map[int]bool) {
	for p := 0; ; {
		k := bytes.IndexByte(text[p:], '$')
		if k < 0 {
			return
		}
		p += k + 1
		starts := []int{p}
		if p < len(text) && text[p] == '{' {
			starts = append(starts, p+1)
		}
		for _, start := range starts {
			for end := start + 1; end <= min(len(text), start+x.idLen); end++ {
				if j, ok := x.pos[string(text[start:end])]; ok && j < i && wordBoundary(text, end) {
					hit[j] = true
				}
			}
		}
	}
}

// vars marks in hit the steps before i whose LOBSTER_STEP_<ID>_ variable
// text names.
func (x *stepRefs) vars(text []byte, i int, hit map[int]bool) {
	const prefix = "LOBSTER_STEP_"
	for p := 0; ; p++ {
		k := bytes.Index(text[p:], []byte(prefix))
		if k < 0 {
			return
		}
		p += k
		for end := p + len(prefix) + 1; end <= min(len(text), p+x.envLen); end++ {
			for _, j := range x.env[string(text[p:end])] {
				if j < i {
					hit[j] = true
				}
			}
		}
	}
}

// wordBoundary reports whether position end of text is an ASCII word
// boundary, as regexp's \b matches one.
func wordBoundary(text []byte, end int) bool {
	before := end > 0 && isWordByte(text[end-1])
	after := end < len(text) && isWordByte(text[end])
	return before != after
}

func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}
