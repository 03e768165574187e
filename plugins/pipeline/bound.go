package pipeline

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// maxOwnState bounds what the controller writes into a flow's state
// (results, prior outputs, state-stage outputs, stage reports, gate
// deadlines, the plan snapshot) and the output it finishes with, which
// the record holds beside the state and counts with it (state.produced),
// for any workflow CheckBound accepts. maxState less this leaves 256 KiB
// for what the caller puts there (file, args, env, cwd, session).
const maxOwnState = 512 << 10

// Worst-case sizes of the pieces of the state the controller writes when
// values are kept in files: a result entry besides its key, a gate
// deadline besides its key, the output (held, or named by its file, with
// what a renderer printed), prior outputs, state-stage outputs, stage
// reports and the other keys the controller writes (pathMax bounds a
// kept file's path).
const (
	pathMax       = 4096
	spilledEntry  = len(`:{"spilled":""},`) + 64
	deadlineEntry = len(`:"2006-01-02T15:04:05.999999999Z",`)
	fixedOwn      = maxInlineResults + // inline results
		maxInlinePrior + len(`"prior_output":,"prior_output_file":"",`) + 64 +
		maxInlineStageOut + len(`"stage_outputs":,"stage_outputs_file":"",`) + 64 +
		len(`"stages":{},`) + maxStageReports*(maxReportKey+len(`:,`)+maxReportBytes) +
		len(`"output":{"file":{"path":"","sha256":""}},`) + 64 + pathMax + sdk.InlineStdout +
		// A sink's output is [], so its rendering and the output share
		// the inline room.
		len(`"text_file":{"path":"","sha256":""},`) + 64 + pathMax +
		1024 // the other keys, braces and the continuation mark
)

// CheckBound reports whether a flow running wf keeps its state within
// the documented bound however much its steps print: the controller
// keeps large values in files, so what grows with the workflow is one
// small entry per step result (each step, parallel branch and
// sub-workflow step named by a literal path) and the plan snapshot, one
// node per top-level step with its dependencies. The error says how large
// the state could grow and what to do. flowgate pipeline validate and
// run call it, and the controller fails a flow whose workflow does not
// pass it before running any step.
func CheckBound(wf *flows.Workflow) error {
	return checkBound(wf, 0, 0)
}

// checkBound is CheckBound with extra result entries of extraBytes (a
// sub-workflow loaded at run time) on top of wf's own.
func checkBound(wf *flows.Workflow, extra, extraBytes int) error {
	n, entries := resultEntries(wf.Steps, "")
	n, entries = n+extra, entries+extraBytes
	need := fixedOwn + entries
	if need <= maxOwnState {
		// The plan is computed only when the rest fits: its dependency
		// walk is quadratic in the steps.
		plan, err := json.Marshal(largestPlan(wf))
		if err != nil {
			return err
		}
		if need += len(plan); need <= maxOwnState {
			return nil
		}
	}
	return fmt.Errorf("workflow %s has %d step results (steps, parallel branches and sub-workflow steps); a flow running it could need %d bytes of state for them and its plan, over the %d a pipeline may use: split it into smaller workflows that run one after another", wf.File, n, need, maxOwnState)
}

// resultEntries counts the results steps leave in the state (keys with
// prefix) and the most their entries take when kept in files.
func resultEntries(steps []flows.Step, prefix string) (n, size int) {
	add := func(key string) {
		k, _ := json.Marshal(key)
		n, size = n+1, size+len(k)+spilledEntry
		if prefix == "" {
			size += len(k) + deadlineEntry // a gate's deadline, at most one per top-level step
		}
	}
	for i := range steps {
		s := &steps[i]
		add(prefix + s.ID)
		if s.Parallel != nil {
			for _, b := range s.Parallel.Branches {
				add(prefix + b.ID)
			}
		}
		if s.Sub != nil {
			sn, ss := resultEntries(s.Sub.Steps, prefix+s.ID+">")
			n, size = n+sn, size+ss
		}
	}
	return n, size
}

// largestPlan is the plan of wf at its largest: every node's view with a
// detail as long as the plan keeps, the longest phase, and a loop's
// counts as large as they go.
func largestPlan(wf *flows.Workflow) sdk.Plan {
	done := allDone(wf)
	p := planOf(wf, done)
	loops := map[string]sdk.NodeItems{}
	for _, s := range wf.Steps {
		if s.ForEach != nil {
			loops[s.ID] = sdk.NodeItems{Total: math.MaxInt32, Done: math.MaxInt32, Failed: math.MaxInt32, Running: math.MaxInt32}
		}
	}
	fillView(&p, wf, looksOf(wf, nil), done, passEnd{}, nil, loops, nil, nil)
	for i := range p.Nodes {
		n := &p.Nodes[i]
		n.Detail, n.Phase = strings.Repeat("x", maxViewDetail-2), sdk.PhaseSucceeded
		for j := range n.Branches {
			n.Branches[j].Phase = sdk.PhaseSucceeded
		}
		if n.Items != nil {
			n.Items.Failed, n.Items.Running = math.MaxInt32, math.MaxInt32
		}
	}
	return p
}

// allDone is a result for every top-level step of wf, as the plan of a
// finished run has them.
func allDone(wf *flows.Workflow) map[string]flows.StepResult {
	m := make(map[string]flows.StepResult, len(wf.Steps))
	for _, s := range wf.Steps {
		m[s.ID] = flows.StepResult{ID: s.ID}
	}
	return m
}
