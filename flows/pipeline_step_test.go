package flows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

const pipelineStepFile = `
args:
  n: {default: "2"}
steps:
  - id: list
    pipeline: exec --json --shell 'echo [3,1,2]' | sort | head --n ${n}
  - id: later
    pipeline: "exec echo $list.json | where x=1"
`

func TestPipelineStepsLoad(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("p.lobster", []byte(pipelineStepFile))
	require.NoError(t, err)
	require.Equal(t, "pipeline", wf.Steps[0].Kind())
	require.Equal(t, "exec --json --shell 'echo [3,1,2]' | sort | head --n ${n}", wf.Steps[0].Pipeline)

	plan := flows.DryRun(wf, flows.ResolveArgs(wf, nil))
	require.Contains(t, plan, "1. list  [pipeline]\n     pipeline: exec --json --shell 'echo [3,1,2]' | sort | head --n 2\n")
	require.Contains(t, plan, "2. later  [pipeline]\n     pipeline: exec echo $list.json | where x=1  [contains step output refs — unknown at plan time]\n")

	g, err := flows.Graph(wf, "ascii", flows.ResolveArgs(wf, nil))
	require.NoError(t, err)
	require.Contains(t, g, "head --n 2")
}
