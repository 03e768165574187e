package runcenter_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// A pipeline's gate prompt shows filled in on the gates page and the
// flow's page: the arg's value, never the ${arg} template.
func TestGatePromptShowsFilledIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wf := filepath.Join(dir, "trip.lobster")
	require.NoError(t, os.WriteFile(wf, []byte("name: trip\nargs:\n  city: {default: Paris}\nsteps:\n  - id: book\n    approval: Book a room in ${city}?\n"), 0o600))
	var id string
	s := startSeeded(t, func(eng *engine.Engine) {
		state, err := flows.Invocation{File: wf, Args: json.RawMessage(`{"city":"Lyon"}`), Cwd: dir}.State()
		require.NoError(t, err)
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "web", ControllerID: flows.PipelineController, Goal: "trip", State: state})
		require.NoError(t, err)
		id = f.ID
	})
	require.Eventually(t, func() bool {
		v, err := s.c.ViewFlow(context.Background(), id)
		require.NoError(t, err)
		require.False(t, v.Status.Terminal(), "the flow ended before its gate: %s", v.BlockedSummary)
		return v.Status == sdk.FlowWaiting
	}, 30*time.Second, 20*time.Millisecond, "the pipeline flow parks at its gate")
	for _, page := range []string{"/gates", "/flows/" + id} {
		body := s.get(page, "")
		require.Contains(t, body, "Book a room in Lyon?", page)
		require.NotContains(t, body, "${city}", page)
	}
}
