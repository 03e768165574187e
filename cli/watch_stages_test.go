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
	w := startWatch(t, home, f.ID)
	out := &w.out
	require.Contains(t, out.String(), "Pipeline stages:\n- pipeline: exec → 3 | approve (stopped here: waiting for approval)\n")

	seed(t, home, func(eng *engine.Engine) {
		_, err := eng.Finish(f.ID, f.Revision, engine.EndInput{State: json.RawMessage(`{"stages":{"pipeline":{"stages":[{"name":"exec","items":3},{"name":"approve","items":3}],"at":-1}}}`)})
		require.NoError(t, err)
	})
	w.ended(t)
	require.Contains(t, out.String(), "- pipeline: exec → 3 | approve → 3\n")
}

// watching is a running "tasks flow show --watch" and what it printed.
type watching struct {
	out, errb syncBuffer
	done      chan int
}

// startWatch runs "tasks flow show ID --watch" over home and waits, for at
// most 30 s, for its first frame.
func startWatch(t *testing.T, home, id string) *watching {
	t.Helper()
	w := &watching{done: make(chan int, 1)}
	go func() {
		w.done <- cli.Main([]string{"--home", home, "tasks", "flow", "show", id, "--watch"}, &w.out, &w.errb)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(w.out.String(), "Recent history:") {
		require.True(t, time.Now().Before(deadline), "no first frame: %s %s", w.out.String(), w.errb.String())
		time.Sleep(20 * time.Millisecond)
	}
	return w
}

// ended waits, for at most a minute, for the watch to return once its
// flow ended, and checks that it exited 0.
func (w *watching) ended(t *testing.T) {
	t.Helper()
	select {
	case code := <-w.done:
		require.Equal(t, 0, code, w.errb.String())
	case <-time.After(time.Minute):
		t.Fatalf("--watch did not return once the flow ended: %s", w.out.String())
	}
}
