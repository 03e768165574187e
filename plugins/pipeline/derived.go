package pipeline

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// combined marks r, the result of a step that combines other steps'
// results (parallel, workflow), as derived when its encoding is over
// sdk.InlineStdout. The state then keeps only its id and gate fields, not
// a second copy of what it combines (each part is kept on its own, inline
// or in its task's log file), and rederive computes it again when the
// state is read.
func combined(r flows.StepResult) flows.StepResult {
	b, err := json.Marshal(r)
	r.Derived = err != nil || len(b) > sdk.InlineStdout
	return r
}

// rederive computes again kept, the derived result of step s of frame fr
// as the state holds it (without stdout and json), from the results it
// combines, and keeps its gate's decision. stop and err are step's: a
// failure on the way ends the pass.
func (r *run) rederive(ctx context.Context, fr *frame, s *flows.Step, kept flows.StepResult) (res flows.StepResult, stop bool, err error) {
	var got *flows.StepResult
	switch s.Kind() {
	case "parallel":
		var branches []flows.StepResult
		for _, b := range s.Parallel.Branches {
			if br, ok := fr.results[b.ID]; ok {
				branches = append(branches, br)
			}
		}
		if len(branches) > 0 {
			out := parallelResult(s, branches)
			got = &out
		}
	case "workflow":
		var (
			failTask string
			failErr  error
		)
		got, failTask, failErr, err = r.subWorkflow(ctx, fr, s)
		switch {
		case err != nil:
			return kept, true, err
		case failErr != nil:
			stop, err = r.stepFailed(ctx, fr, s, failTask, failErr)
			return kept, stop, err
		case got == nil:
			return kept, true, nil // steps of the sub-workflow run again
		}
	}
	if got == nil {
		stop, err = r.stepFailed(ctx, fr, s, "", fmt.Errorf("the result of step %s is kept as a reference to the results it combines, and those are gone from the flow's state; run the pipeline again", s.ID))
		return kept, stop, err
	}
	got.Approved, got.ApprovedBy, got.InitiatedBy = kept.Approved, kept.ApprovedBy, kept.InitiatedBy
	r.set(fr, s.ID, *got)
	return *got, false, nil
}
