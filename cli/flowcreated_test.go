package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// tasks flow show names what a controller created a flow under: its key,
// its parent and its labels.
func TestFlowShowSaysWhatAControllerCreatedItUnder(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var child *sdk.Flow
	seed(t, home, func(eng *engine.Engine) {
		parent, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "inbox", Goal: "watch"})
		require.NoError(t, err)
		child, _, err = eng.CreateControllerFlow("inbox", sdk.FlowRequest{IdempotencyKey: "a.txt@1", Goal: "import a.txt", OwnerKey: "o",
			ParentFlowID: parent.ID, Labels: map[string]string{"source": "inbox", "kind": "file"}})
		require.NoError(t, err)
	})
	code, out, errOut := run(t, home, "tasks", "flow", "show", child.ID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `idempotencyKey:\s+a\.txt@1`, out)
	require.Regexp(t, `parent:\s+`+child.ParentFlowID, out)
	require.Regexp(t, `labels:\s+kind=file, source=inbox`, out)
}
