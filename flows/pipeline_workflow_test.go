package flows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

func TestPipelineWorkflow(t *testing.T) {
	t.Parallel()
	wf, err := flows.PipelineWorkflow("exec --json --shell 'echo [1]' | head")
	require.NoError(t, err)
	require.Len(t, wf.Steps, 1)
	s := wf.Steps[0]
	require.Equal(t, flows.PipelineStepID, s.ID)
	require.Equal(t, "pipeline", s.Kind())
	require.Equal(t, "stop", s.OnError)
	require.Equal(t, 1, s.Retry.Max)

	_, err = flows.PipelineWorkflow("head |")
	require.NoError(t, err, "a trailing pipe is ignored")
	_, err = flows.PipelineWorkflow("head | | json")
	require.ErrorIs(t, err, flows.ErrEmptyStage)
}

func TestPipelineDryRun(t *testing.T) {
	t.Parallel()
	known := func(n string) bool { return n != "nosuch" }
	stages, err := flows.ParsePipeline("exec --json --shell 'echo [1]' | where a=1 | json")
	require.NoError(t, err)
	got, err := flows.PipelineDryRun(stages, known)
	require.NoError(t, err)
	require.Equal(t, "[DRY RUN] Pipeline (3 stages):\n  1. exec  args: json=true, shell=echo [1]\n  2. where  args: a=1\n  3. json\n", got)

	stages, err = flows.ParsePipeline("head")
	require.NoError(t, err)
	got, err = flows.PipelineDryRun(stages, known)
	require.NoError(t, err)
	require.Equal(t, "[DRY RUN] Pipeline (1 stage):\n  1. head\n", got)

	stages, err = flows.ParsePipeline("head | nosuch")
	require.NoError(t, err)
	_, err = flows.PipelineDryRun(stages, known)
	require.EqualError(t, err, "Unknown command: nosuch")
}
