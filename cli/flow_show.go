package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// failingTask is the task a flow that did not succeed ended on: the one
// its controller named (BlockedTaskID), or else its newest task that
// failed, timed out or was lost. nil when there is none.
func failingTask(v apitype.FlowView) *apitype.Task {
	for _, t := range v.Tasks {
		if v.BlockedTaskID != "" && t.ID == v.BlockedTaskID {
			return t
		}
	}
	var last *apitype.Task
	for _, t := range v.Tasks {
		switch t.Status {
		case sdk.TaskFailed, sdk.TaskTimedOut, sdk.TaskLost:
			if last == nil || t.CreatedAt.After(last.CreatedAt) {
				last = t
			}
		}
	}
	return last
}

// endReason says in one line why a flow ended without succeeding: the
// summary its controller gave, or else the failing task's reason and last
// error.
func endReason(f *sdk.Flow, failed *apitype.Task) string {
	if f.BlockedSummary != "" {
		return clean(f.BlockedSummary)
	}
	if failed == nil {
		return ""
	}
	var parts []string
	if failed.Reason != "" {
		parts = append(parts, failed.Reason)
	}
	if n := len(failed.Errors); n > 0 {
		parts = append(parts, failed.Errors[n-1])
	}
	return clean(strings.Join(parts, ": "))
}

// endLabel names the row of endReason by how the flow ended, so a
// failed flow's summary (BlockedSummary, filled for every end) never
// reads as a block.
func endLabel(s sdk.FlowStatus) string {
	switch s {
	case sdk.FlowFailed:
		return "failedBecause"
	case sdk.FlowPartial:
		return "partlyFailedBecause"
	case sdk.FlowCancelled:
		return "cancelledBecause"
	case sdk.FlowLost:
		return "lostBecause"
	}
	return "reason"
}

// stateLine says in one line why a flow is parked: the blocked summary or
// task, or a short shape of what it waits for.
func stateLine(f *sdk.Flow) string {
	switch f.Status {
	case sdk.FlowBlocked:
		switch {
		case f.BlockedSummary != "":
			return clean(f.BlockedSummary)
		case f.BlockedTaskID != "":
			return "blocked by " + clean(f.BlockedTaskID)
		}
		return "blocked"
	case sdk.FlowWaiting:
		return clip(jsonShape(f.Wait), 120)
	}
	return ""
}

// jsonShape summarizes a JSON value: an object's sorted keys, an array's
// length, a scalar as itself.
func jsonShape(b json.RawMessage) string {
	var v any
	if len(b) == 0 || json.Unmarshal(b, &v) != nil {
		return "waiting"
	}
	switch x := v.(type) {
	case map[string]any:
		if k, ok := x["kind"].(string); ok {
			if p, ok := x["prompt"].(string); ok {
				return k + ": " + p
			}
			return k
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return strings.Join(keys, ", ")
	case []any:
		return fmt.Sprintf("array(%d)", len(x))
	case nil:
		return "waiting"
	}
	return string(b)
}

// flowShow is what flow show prints: the flow's view and, for a flow
// that runs typed pipelines, how far each got.
type flowShow struct {
	apitype.FlowView
	Stages map[string]sdk.StageReport `json:"pipeline_stages,omitempty"`
}

// pipelineStages reads the stage reports a flow's controller publishes
// (sdk.StagesKey, the pipeline controller's); none for a flow without
// any, or whose reports cannot be read.
func pipelineStages(v apitype.FlowView) map[string]sdk.StageReport {
	reps, err := sdk.StageReportsOf(v.Flow)
	if err != nil || len(reps) == 0 {
		return nil
	}
	return reps
}

// writeStages lists each typed pipeline's stages with how many items each
// produced, and the stage it stands at: a running task, a gate, a
// failure. Stages not reached show no count; a report cut short ends
// with how many stages it leaves out.
func writeStages(w io.Writer, reps map[string]sdk.StageReport) {
	if len(reps) == 0 {
		return
	}
	fmt.Fprintln(w, "Pipeline stages:")
	ids := make([]string, 0, len(reps))
	for id := range reps {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		rep := reps[id]
		parts := make([]string, len(rep.Stages))
		for i, st := range rep.Stages {
			parts[i] = clean(st.Name)
			switch {
			case i == rep.At && rep.Failed:
				parts[i] += " (failed here)"
			case i == rep.At && rep.Waiting == "task":
				parts[i] += " (running)"
			case i == rep.At && rep.Waiting != "":
				parts[i] += " (stopped here: waiting for " + rep.Waiting + ")"
			case st.Items != nil:
				parts[i] += fmt.Sprintf(" → %d", *st.Items)
			}
		}
		if rep.More > 0 {
			parts = append(parts, fmt.Sprintf("… %d more", rep.More))
		}
		fmt.Fprintf(w, "- %s: %s\n", clean(id), strings.Join(parts, " | "))
	}
}

// outputShown bounds how much of a flow's output flow show prints, in
// characters; --json prints the record, and pipeline run the whole
// output.
const outputShown = 4000

// writeProduced prints what the flow's controller produced, from the
// flow's own fields: the answers given at its gates (sdk.Flow.Decisions)
// and its output (sdk.Flow.Output), read through kept when it is kept
// outside the record. An output that cannot be read says why.
func writeProduced(w io.Writer, v apitype.FlowView, kept sdk.KeptReader) {
	if len(v.Decisions) > 0 {
		fmt.Fprintln(w, "Gate decisions:")
		steps := make([]string, 0, len(v.Decisions))
		for step := range v.Decisions {
			steps = append(steps, step)
		}
		sort.Strings(steps)
		for _, step := range steps {
			d := v.Decisions[step]
			answer := clip(string(d.Response), 80)
			if d.Approved != nil {
				answer = map[bool]string{true: "approved", false: "denied"}[*d.Approved]
			}
			line := fmt.Sprintf("- %s %s by %s at %s", clean(step), answer, orNA(clean(d.By)), stamp(d.At))
			if d.Reason != "" {
				line += " (" + clean(d.Reason) + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
	if v.Output == nil {
		return
	}
	fmt.Fprintln(w, "Output:")
	if text, err := v.Output.ReadText(kept); err != nil {
		fmt.Fprintf(w, "  (what it printed cannot be read: %s)\n", clean(err.Error()))
	} else if text != "" {
		fmt.Fprintf(w, "  printed: %s\n", clip(text, outputShown))
	}
	out, err := v.Output.ReadValue(kept)
	if err != nil {
		fmt.Fprintf(w, "  (the output cannot be read: %s)\n", clean(err.Error()))
		return
	}
	var b bytes.Buffer
	if len(out) == 0 || json.Indent(&b, out, "  ", "  ") != nil {
		b.Reset()
		b.Write(out)
	}
	text := b.String()
	if r := []rune(text); len(r) > outputShown {
		text = string(r[:outputShown]) + "\n  … (cut; pipeline envelopes and the API carry all of it)"
	}
	fmt.Fprintln(w, "  "+text)
}
