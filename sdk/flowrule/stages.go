package flowrule

import (
	"encoding/json"
	"fmt"

	"github.com/flowgate/flowgate/sdk"
)

// StageReportsOf reads the stage reports a controller keeps in f's state
// under sdk.StagesKey, by pipeline id: "<step id>" for a pipeline: step,
// "<step id>/<branch id>" for a parallel branch, "<step id>/<sub-step
// id>[<item>]" for a for_each sub-step. A flow without any has an empty
// map; a state that is not an object, or whose reports are damaged, is
// an error.
func StageReportsOf(f *sdk.Flow) (map[string]sdk.StageReport, error) {
	out := map[string]sdk.StageReport{}
	if len(f.State) == 0 {
		return out, nil
	}
	var st map[string]json.RawMessage
	if err := json.Unmarshal(f.State, &st); err != nil {
		return nil, fmt.Errorf("read the stage reports of flow %s: its state is not a JSON object: %w", f.ID, err)
	}
	if raw, ok := st[sdk.StagesKey]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("read the stage reports of flow %s: %w", f.ID, err)
		}
	}
	return out, nil
}
