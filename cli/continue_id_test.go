package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPipelineContinueUnknownIDSaysToUseTheFlowID checks that pipeline
// continue, given an id that is neither a flow nor an open gate's
// approval id (an approval id stops working once its gate closes), fails
// as not found and tells to pass the failed flow's id.
func TestPipelineContinueUnknownIDSaysToUseTheFlowID(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, stdout, errOut := run(t, home, "pipeline", "continue", "--id", "apr-closed", "--reason", "retry it")
	require.Equal(t, 1, code, stdout+errOut)
	require.Contains(t, errOut, "apr-closed")
	require.Contains(t, errOut, "flow id", "the error says to use the flow id")
	require.Contains(t, errOut, "tasks flow list", "the error says where to find the flow id")
}
