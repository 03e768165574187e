package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// Finish records the output the controller gives as the flow's own
// field, and refuses one whose value is no JSON, changing nothing; Fail
// records none.
func TestFinishRecordsTheOutput(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	_, err := eng.Finish(f.ID, f.Revision, engine.EndInput{Output: &sdk.Output{Value: json.RawMessage(`[1,`)}})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "the flow's output value is not valid JSON")
	got, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, f.Revision, got.Revision)

	done, err := eng.Finish(f.ID, f.Revision, engine.EndInput{Output: &sdk.Output{Value: json.RawMessage(`["a"]`), Text: "a\n"}})
	require.NoError(t, err)
	got, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, done.Output, got.Output)
	require.Equal(t, &sdk.Output{Value: json.RawMessage(`["a"]`), Text: "a\n"}, got.Output)

	g := createFlow(t, eng)
	failed, err := eng.Fail(g.ID, g.Revision, engine.EndInput{Output: &sdk.Output{Value: json.RawMessage(`1`)}})
	require.NoError(t, err)
	require.Nil(t, failed.Output, "a failed flow produced nothing")
}

// A pipeline flow that succeeded before flows had an output kept it in
// its state: every read of the record gives it as the flow's output,
// inline or kept, with what its renderer printed. Another controller's
// state is never read so.
func TestOutputOfAPipelineFlowOfBefore(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	finish := func(controller, state string) *sdk.Flow {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: controller, Goal: "g"})
		require.NoError(t, err)
		_, err = eng.Finish(f.ID, f.Revision, engine.EndInput{State: json.RawMessage(state)})
		require.NoError(t, err)
		got, err := eng.GetFlow(f.ID)
		require.NoError(t, err)
		return got
	}
	inline := finish("pipeline", `{"file":"/w.lobster","output":[1,2],"rendered":"a table\n"}`)
	require.Equal(t, &sdk.Output{Value: json.RawMessage(`[1,2]`), Text: "a table\n"}, inline.Output)
	kept := finish("pipeline", `{"output_file":{"sha256":"ab","kept":true},"rendered_file":{"path":"/d/cd","sha256":"cd"}}`)
	require.Equal(t, &sdk.Output{File: &sdk.OutputFile{SHA256: "ab", Kept: true}, TextFile: &sdk.OutputFile{Path: "/d/cd", SHA256: "cd"}}, kept.Output)
	require.Nil(t, finish("ctl", `{"output":[1]}`).Output, "another controller's state is its own")
	require.Nil(t, finish("pipeline", `{"file":"/w.lobster"}`).Output, "no output yet")

	views, err := eng.ViewFlow(inline.ID)
	require.NoError(t, err)
	require.Equal(t, inline.Output, views.Output, "views read it too")
}
