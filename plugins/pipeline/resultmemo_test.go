package pipeline_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// The controller keeps the results each pass decoded (not decoding again
// those whose bytes are unchanged), yet every pass reads the flow's state
// as it now stands: two flows of one file whose first steps printed
// different things each see their own, and a result another writer
// rewrote between two events (a person's `tasks flow update`) is the one
// the next step is given, though the pass before had decoded it as it was.
func TestDecodedResultsAreTheStatesAsItNowStands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "memo.lobster")
	text := "name: memo\nargs:\n  who:\n    default: nobody\nsteps:\n  - id: a\n    run: echo ${who}\n"
	for _, id := range []string{"b", "c", "d"} {
		text += "  - id: " + id + "\n    run: cat\n    stdin: $a.stdout\n"
	}
	require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
	h := sdktest.New(t, pipeline.New())
	start := func(who string) *sdk.Flow {
		return h.StartFlow("memo", map[string]any{"file": file, "args": map[string]any{"who": who}, "cwd": dir})
	}
	one, two := start("one"), start("two")
	r := &runner{}
	for range 2 { // a, then b: the pass after b decoded a's result
		r.next(t, h, one.ID)
		r.next(t, h, two.ID)
	}
	require.Equal(t, "one\n", active(t, h, one.ID).Spec.Input)
	require.Equal(t, "two\n", active(t, h, two.ID).Spec.Input)

	f := h.Flow(one.ID)
	var state map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(f.State, &state))
	var results map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(state["results"], &results))
	results["a"] = json.RawMessage(`{"id":"a","stdout":"edited\n"}`)
	b, err := json.Marshal(results)
	require.NoError(t, err)
	state["results"] = b
	b, err = json.Marshal(state)
	require.NoError(t, err)
	_, err = h.Host().UpdateFlow(t.Context(), one.ID, f.Revision, sdk.FlowUpdate{State: b})
	require.NoError(t, err)

	r.next(t, h, one.ID) // c
	r.next(t, h, two.ID)
	require.Equal(t, "edited\n", active(t, h, one.ID).Spec.Input, "the pass used the result as it was decoded before the edit")
	require.Equal(t, "two\n", active(t, h, two.ID).Spec.Input, "a result of the other flow reached this one")
	for _, id := range []string{one.ID, two.ID} {
		r.next(t, h, id)
		require.Equal(t, sdk.FlowSucceeded, h.Flow(id).Status, h.Flow(id).BlockedSummary)
	}
}
