package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/cli"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// TestFlowShowWatchDrawsPipelineStages: --watch draws a pipeline flow's
// stage lines as flow show prints them, and redraws them as they move.
func TestFlowShowWatchDrawsPipelineStages(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var f *sdk.Flow
	seed(t, home, func(eng *engine.Engine) {
		var err error
		f, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: pipeline.Name, Goal: "g",
			State: json.RawMessage(`{"stages":{"pipeline":{"stages":[{"name":"exec","items":3},{"name":"approve"}],"at":1,"waiting":"approval"}}}`)})
		require.NoError(t, err)
	})
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Main([]string{"--home", home, "tasks", "flow", "show", f.ID, "--watch"}, &out, &errb)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "Recent history:") {
		require.True(t, time.Now().Before(deadline), "no first frame: %s %s", out.String(), errb.String())
		time.Sleep(20 * time.Millisecond)
	}
	require.Contains(t, out.String(), "Pipeline stages:\n- pipeline: exec → 3 | approve (stopped here: waiting for approval)\n")

	seed(t, home, func(eng *engine.Engine) {
		_, err := eng.Finish(f.ID, f.Revision, engine.EndInput{State: json.RawMessage(`{"stages":{"pipeline":{"stages":[{"name":"exec","items":3},{"name":"approve","items":3}],"at":-1}}}`)})
		require.NoError(t, err)
	})
	select {
	case code := <-done:
		require.Equal(t, 0, code, errb.String())
	case <-time.After(time.Minute):
		t.Fatalf("--watch did not return once the flow ended: %s", out.String())
	}
	require.Contains(t, out.String(), "- pipeline: exec → 3 | approve → 3\n")
}
