package flows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

const pipelinesFile = `args:
  n: {default: 3}
steps:
  - id: top
    pipeline: exec --json cat data.json | where a>1 | head --n ${n}
  - id: par
    parallel:
      branches:
        - id: b
          pipeline: sort --key a | json
        - id: r
          run: echo hi
  - id: loop
    for_each: $top.json
    steps:
      - id: s
        pipeline: template --text '{{a}}' | $top.stdout
  - id: bad
    pipeline: where a=1 | llm.invoke --prompt hi
`

// TestPipelinesListsEveryPipeline: the pipelines of steps, branches and
// for_each sub-steps, with ${arg} resolved and their stages parsed.
func TestPipelinesListsEveryPipeline(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("p.lobster", []byte(pipelinesFile))
	require.NoError(t, err)
	var got [][2]string
	for _, p := range flows.Pipelines(wf, flows.ResolveArgs(wf, nil)) {
		got = append(got, [2]string{p.ID, p.StageNames()})
	}
	require.Equal(t, [][2]string{
		{"top", "exec | where | head"},
		{"par/b", "sort | json"},
		{"loop/s", "template | $top.stdout"},
		{"bad", "where | llm.invoke"},
	}, got)
	head := flows.Pipelines(wf, flows.ResolveArgs(wf, nil))[0].Stages[2]
	require.Equal(t, "3", head.Args.Named["n"], "${n} is resolved in its word")
	require.Equal(t, "head --n ${n}", head.Raw, "Raw is the stage as written")
}

// TestCheckPipelineCommands: the first stage naming an unknown command is
// reported in Lobster's dry-run words; a stage named by a step ref is left
// for run time.
func TestCheckPipelineCommands(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("p.lobster", []byte(pipelinesFile))
	require.NoError(t, err)
	known := func(name string) bool { return name != "llm.invoke" }
	require.EqualError(t, flows.CheckPipelineCommands(wf, nil, known), "Workflow step bad pipeline references unknown command: llm.invoke")
	require.NoError(t, flows.CheckPipelineCommands(wf, nil, func(string) bool { return true }))
	none := func(name string) bool { return false }
	var unknown *flows.UnknownStageError
	require.ErrorAs(t, flows.CheckPipelineCommands(wf, nil, none), &unknown)
	require.Equal(t, flows.UnknownStageError{Step: "top", Name: "exec"}, *unknown)
}

// TestDryRunAndGraphShowPipelineStages: a dry run marks pipeline
// branches, and a graph puts each stage of a pipeline step on a line.
func TestDryRunAndGraphShowPipelineStages(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("p.lobster", []byte(pipelinesFile))
	require.NoError(t, err)
	plan := flows.DryRun(wf, flows.ResolveArgs(wf, nil))
	require.Contains(t, plan, "     branch b: [pipeline] sort --key a | json\n     branch r: [shell] echo hi\n")
	g, err := flows.Graph(wf, "ascii", flows.ResolveArgs(wf, nil))
	require.NoError(t, err)
	require.Contains(t, g, "exec --json cat data.json\n")
	require.Contains(t, g, "| where a>1\n")
	require.Contains(t, g, "| head --n 3")
	require.Contains(t, g, "b (pipeline), r")
}
