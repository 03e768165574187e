package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// StageFlowID is the flow the stages case names in its stage calls. No
// such flow exists: a stage runs for a pipeline's flow, which another
// controller drives, so a stage may not rely on reading it.
const StageFlowID = "flowgate-plugins-test-stages"

// stages runs every pipeline stage the plugin declares in Info.Stages as
// a pipeline would after an earlier stage let no item through (no items,
// no args), then asks again with the same key, as after a gateway killed
// between the answer and its record. Each call must be answered with
// JSON, not an error. A plugin that declares no stage passes with nothing
// to check.
func (h *harness) stages(ctx context.Context) Result {
	res := Result{Case: "stages"}
	if len(h.declared) == 0 {
		res.Pass, res.Detail = true, "the plugin declares no pipeline stage (sdk.Info.Stages): nothing to check"
		return res
	}
	var names []string
	for _, st := range h.declared {
		names = append(names, st.Name)
		call := sdk.StageCall{FlowID: StageFlowID, Key: "step:0:0", Name: st.Name, Args: json.RawMessage(`{"_":[]}`), Items: json.RawMessage(`[]`)}
		for _, what := range []string{"no items", "the same call again"} {
			out, err := h.runStage(ctx, call)
			if err != nil {
				res.Detail = fmt.Sprintf("stage %s, called with %s: %v; a stage must answer an empty list of items (an empty array is no items)", st.Name, what, err)
				return res
			}
			if len(out) > 0 && !json.Valid(out) {
				res.Detail = fmt.Sprintf("stage %s, called with %s, answered %q, which is not JSON; answer a JSON array of items, one JSON value, or nothing", st.Name, what, clip(out))
				return res
			}
			res.Did = append(res.Did, fmt.Sprintf("RunStage %s with %s → %s", st.Name, what, clip(out)))
		}
	}
	res.Pass, res.Detail = true, "every declared stage ("+strings.Join(names, ", ")+") answered no items with JSON, twice with the same key"
	return res
}

// runStage asks the plugin, through the gateway, to run call, within
// the Timeout.
func (h *harness) runStage(ctx context.Context, call sdk.StageCall) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	return h.sup.RunStage(ctx, call)
}

// clip is a stage's output as a case shows it: at most 80 bytes.
func clip(out []byte) string {
	if len(out) == 0 {
		return "(nothing)"
	}
	if len(out) > 80 {
		return string(out[:80]) + "…"
	}
	return string(out)
}
