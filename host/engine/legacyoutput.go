package engine

import (
	"bytes"
	"encoding/json"

	"github.com/flowgate/flowgate/sdk"
)

// legacyController is the controller whose flows finished before
// sdk.Flow.Output existed with their output in the state: the pipeline
// controller's name.
const legacyController = "pipeline"

// legacyOutput fills in the Output of f, a flow read from the store, when
// it is a pipeline flow that succeeded before flows had an output field:
// that controller kept the output in its state then ("output", or
// "output_file" naming where it was kept, and "rendered" or
// "rendered_file" for what a pipeline string's renderer printed). The
// record is not rewritten; every read of it gets the output so, which is
// how records written before the change keep working without a
// migration pass. Any other flow, and one with an Output, is left alone.
func legacyOutput(f *sdk.Flow) {
	if f.Output != nil || f.Status != sdk.FlowSucceeded || f.ControllerID != legacyController || !bytes.Contains(f.State, []byte(`"output`)) {
		return
	}
	var st struct {
		Output       json.RawMessage `json:"output"`
		OutputFile   *sdk.OutputFile `json:"output_file"`
		Rendered     json.RawMessage `json:"rendered"`
		RenderedFile *sdk.OutputFile `json:"rendered_file"`
	}
	if json.Unmarshal(f.State, &st) != nil || (st.Output == nil && st.OutputFile == nil) {
		return
	}
	o := &sdk.Output{File: st.OutputFile, TextFile: st.RenderedFile}
	if o.File == nil {
		o.Value = st.Output
	}
	if st.Rendered != nil && json.Unmarshal(st.Rendered, &o.Text) != nil {
		return
	}
	f.Output = o
}
