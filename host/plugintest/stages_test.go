package plugintest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// stager is follower with a pipeline stage, pt.count, that answers the
// number of its items.
type stager struct{ follower }

func (stager) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "stager", Version: "0.0.1", APIVersion: sdk.APIVersion,
		Stages: []sdk.Stage{{Name: "pt.count", Description: "count the items"}}}, nil
}

func (stager) RunStage(_ context.Context, _ sdk.Host, call sdk.StageCall) (json.RawMessage, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(call.Items, &items); err != nil {
		return nil, err
	}
	return json.Marshal([]map[string]int{{"count": len(items)}})
}

// declarer declares a stage but has no RunStage to run it.
type declarer struct{ follower }

func (declarer) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "declarer", Version: "0.0.1", APIVersion: sdk.APIVersion,
		Stages: []sdk.Stage{{Name: "pt.missing"}}}, nil
}

// A plugin whose declared stage answers passes stages, and the report
// shows each call; one without stages passes with nothing to check.
func TestStagesCasePasses(t *testing.T) {
	t.Parallel()
	c := runHelper(t, "stager")["stages"]
	require.True(t, c.Pass, "%s\n%s", c.Detail, strings.Join(c.Did, "\n"))
	require.Equal(t, []string{
		`RunStage pt.count with no items → [{"count":0}]`,
		`RunStage pt.count with the same call again → [{"count":0}]`,
	}, c.Did)
	c = runHelper(t, "follower")["stages"]
	require.True(t, c.Pass, c.Detail)
	require.Contains(t, c.Detail, "declares no pipeline stage")
}

// A plugin that declares a stage it cannot run fails stages, naming the
// stage and what to add.
func TestStagesCaseFailsAStageItCannotRun(t *testing.T) {
	t.Parallel()
	c := runHelper(t, "declarer")["stages"]
	require.False(t, c.Pass, strings.Join(c.Did, "\n"))
	require.Contains(t, c.Detail, "stage pt.missing, called with no items")
	require.Contains(t, c.Detail, "does not implement sdk.StageProvider")
}
