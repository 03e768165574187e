package cli

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/sdk"
)

// TestStageSetNamesThePluginThatIsNotRunning: a dry run that meets a
// stage of a plugin that declared it but is not running says which
// plugin, its state and its last error; one nobody declared says how to
// add it and lists the gateway's plugins.
func TestStageSetNamesThePluginThatIsNotRunning(t *testing.T) {
	t.Parallel()
	set := stageSet{gateway: true, plugins: []api.PluginStatus{
		{Name: "sum", State: "failed", LastError: "the plugin process exited", Stages: []sdk.Stage{{Name: "summarize"}}},
		{Name: "pipeline", State: api.PluginRunning},
	}}
	require.False(t, set.has("summarize"))
	err := set.refuse(errors.New("Unknown command: summarize"), "summarize")
	require.ErrorAs(t, err, new(usageError))
	require.EqualError(t, err, "Unknown command: summarize (stage summarize is provided by controller plugin sum, which is not running (state failed, last error: the plugin process exited); see flowgate plugins list and the gateway's log)")

	err = set.refuse(errors.New("Unknown command: gog.send"), "gog.send")
	require.ErrorContains(t, err, "or add a controller plugin that provides it (sdk.Info.Stages) under plugins: in gateway.yaml; the gateway's plugins are sum, pipeline)")
}
