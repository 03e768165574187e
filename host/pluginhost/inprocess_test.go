package pluginhost_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/sdk"
)

// nopController acknowledges every event and counts them.
type nopController struct{ events int }

func (c *nopController) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "nop", APIVersion: sdk.APIVersion}, nil
}

func (c *nopController) HandleEvent(context.Context, sdk.Host, sdk.Event) error {
	c.events++
	return nil
}

func (c *nopController) Shutdown(context.Context) error { return nil }

// An in-process controller gets its events straight from Handler, starts
// no process, and is listed as running in this process; a name that is
// also a plugin's is refused.
func TestInProcessController(t *testing.T) {
	t.Parallel()
	eng := conformanceEngine(t)
	c := &nopController{}
	sup, err := pluginhost.NewSupervisor(eng, pluginhost.SupervisorConfig{Self: "/nonexistent/flowgate",
		InProcess: map[string]sdk.Controller{"nop": c}})
	require.NoError(t, err)
	h, err := sup.Handler("nop")
	require.NoError(t, err)
	require.NoError(t, h.HandleEvent(context.Background(), sdk.Event{FlowID: "f", Seq: 1, Type: sdk.EventFlowStarted}))
	require.Equal(t, 1, c.events)
	ps := sup.Statuses()
	require.Len(t, ps, 1)
	require.Equal(t, pluginhost.Status{Name: "nop", State: pluginhost.StateRunning, PID: os.Getpid(), InProcess: true, Since: ps[0].Since}, ps[0])

	_, err = pluginhost.NewSupervisor(eng, pluginhost.SupervisorConfig{Self: "/nonexistent/flowgate",
		Plugins: []pluginhost.Spec{{Name: "nop"}}, InProcess: map[string]sdk.Controller{"nop": c}})
	require.ErrorContains(t, err, `"nop" is both a plugin and a controller in this process`)
}
