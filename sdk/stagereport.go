package sdk

import (
	"encoding/json"
	"fmt"
)

// StagesKey is the key of a flow's state under which a controller that
// runs typed pipelines keeps how far each got: an object of StageReport
// by pipeline id. Like the plan (PlanKey), it is a published view of the
// flow's progress, so that viewers (flowgate tasks flow show) show it
// without reading the controller's private state; StageReportsOf
// reads it.
const StagesKey = "stages"

// StageReport is how far one typed pipeline got in the last pass that ran
// it: each stage, with how many items it produced, and where it stands.
type StageReport struct {
	Stages []StageCount `json:"stages"`
	// At is the index of the stage the pipeline stands at (its task runs,
	// a gate stopped it, or it failed there); -1 when it ran to its end.
	At int `json:"at"`
	// Waiting is what it waits for at At: "task", "approval", "input",
	// or "cancel" (its gate was denied and the run ends); empty when it
	// does not wait.
	Waiting string `json:"waiting,omitempty"`
	// Failed says the stage at At failed.
	Failed bool `json:"failed,omitempty"`
	// More is how many stages, after those Stages lists, the report
	// leaves out to stay small (a pipeline of very many stages or very
	// long stage names); zero when it lists them all.
	More int `json:"more,omitempty"`
}

// StageCount is one stage of a StageReport.
type StageCount struct {
	Name string `json:"name"`
	// Items is how many items the stage produced; nil when it has not run.
	Items *int `json:"items,omitempty"`
}

// StageReportsOf reads the stage reports a controller keeps in f's state
// under StagesKey, by pipeline id: "<step id>" for a pipeline: step,
// "<step id>/<branch id>" for a parallel branch, "<step id>/<sub-step
// id>[<item>]" for a for_each sub-step. A flow without any has an empty
// map; a state that is not an object, or whose reports are damaged, is
// an error.
func StageReportsOf(f *Flow) (map[string]StageReport, error) {
	out := map[string]StageReport{}
	if len(f.State) == 0 {
		return out, nil
	}
	var st map[string]json.RawMessage
	if err := json.Unmarshal(f.State, &st); err != nil {
		return nil, fmt.Errorf("read the stage reports of flow %s: its state is not a JSON object: %w", f.ID, err)
	}
	if raw, ok := st[StagesKey]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("read the stage reports of flow %s: %w", f.ID, err)
		}
	}
	return out, nil
}
