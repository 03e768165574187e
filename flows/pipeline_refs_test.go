package flows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// closer is a value that, pasted into a pipeline's text before it is
// parsed, would close the quote and add a stage that creates a file.
const closer = `x" | exec --shell "touch pwned`

// resolved parses text and resolves its refs against args and results.
func resolved(t *testing.T, text string, args map[string]any, results map[string]flows.StepResult) []flows.Stage {
	t.Helper()
	stages, err := flows.ParsePipeline(text)
	require.NoError(t, err)
	out, err := flows.ResolveStages(stages, args, results)
	require.NoError(t, err)
	return out
}

// A value lands in the one word its ref was written in: it never closes a
// quote, adds a stage, or becomes a flag or another word.
func TestResolveStagesKeepsEachValueInItsWord(t *testing.T) {
	t.Parallel()
	out := closer
	results := map[string]flows.StepResult{"s1": {ID: "s1", Stdout: &out}}
	args := map[string]any{"name": closer, "words": "a b --shell c", "cmd": "head", "n": 2.0}

	got := resolved(t, `exec --shell "echo ${name}"`, args, nil)
	require.Len(t, got, 1, "an arg's value adds no stage")
	require.Equal(t, "echo "+closer, got[0].Args.Named["shell"])

	got = resolved(t, `exec --shell "echo $s1.stdout"`, nil, results)
	require.Len(t, got, 1, "a step's output adds no stage")
	require.Equal(t, "echo "+closer, got[0].Args.Named["shell"])

	got = resolved(t, `exec echo ${words}`, args, nil)
	require.Equal(t, []string{"echo", "a b --shell c"}, got[0].Args.Positional, "a value with spaces and a flag stays one word")
	require.NotContains(t, got[0].Args.Named, "shell")

	got = resolved(t, `${cmd} --n ${n} | exec --shell 'echo "$LOBSTER_ARG_NAME" $HOME.x'`, args, results)
	require.Equal(t, "head", got[0].Name, "a command name is a word too")
	require.Equal(t, "2", got[0].Args.Named["n"])
	require.Equal(t, `echo "$LOBSTER_ARG_NAME" $HOME.x`, got[1].Args.Named["shell"], "shell variables and unknown ids stay as written")
	require.Equal(t, `${cmd} --n ${n}`, got[0].Raw, "Raw is the text as written")
}

func TestResolveStagesRefusesAFlagNamedByAValueAsPositional(t *testing.T) {
	t.Parallel()
	stages, err := flows.ParsePipeline(`head --${k}=1`)
	require.NoError(t, err)
	_, err = flows.ResolveStages(stages, map[string]any{"k": "_"}, nil)
	require.ErrorIs(t, err, flows.ErrPositionalFlag)
}

// A pipeline is parsed at load whatever refs it holds, since no value can
// change how it parses. One that does not parse loads, as in Lobster
// (its step fails when it runs), and PipelineErrors reports it, with
// its position, for validate.
func TestLoadParsesAPipelineWithRefs(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("w.lobster", []byte("args:\n  name: {default: x}\nsteps:\n  - id: p\n    pipeline: exec --shell \"echo ${name}\n"))
	require.NoError(t, err)
	require.EqualError(t, wf.PipelineErrors(), "w.lobster:5:5: steps[0].pipeline: Workflow step p pipeline parse failed: Unclosed quote")

	wf, err = flows.Parse("w.lobster", []byte("steps:\n  - id: p\n    pipeline: exec --shell \"echo ${name}\"\n"))
	require.NoError(t, err)
	require.NoError(t, wf.PipelineErrors())
}

const pipelineSplicing = `
args:
  name: {default: x}
steps:
  - id: s1
    run: echo hi
  - id: p
    pipeline: exec --shell "echo ${name}"
  - id: q
    pipeline: exec --shell "echo $s1.stdout" | where a==1
  - id: par
    parallel:
      branches:
        - id: b
          pipeline: head --n ${name}
  - id: loop
    for_each: $s1.json
    steps:
      - id: sub
        pipeline: exec echo $item.x
  - id: safe
    pipeline: exec --shell 'echo "$LOBSTER_ARG_NAME" "$LOBSTER_STEP_S1_STDOUT" ${HOME}'
`

func TestSplicesListsRefsInPipelines(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("w.lobster", []byte(pipelineSplicing))
	require.NoError(t, err, "refs in pipelines are allowed by default, as in Lobster")
	var got []string
	for _, sp := range flows.Splices(wf) {
		got = append(got, sp.Key+" "+sp.Ref+" "+sp.Var)
	}
	require.Equal(t, []string{
		"steps[1].pipeline ${name} LOBSTER_ARG_NAME",
		"steps[2].pipeline $s1.stdout LOBSTER_STEP_S1_STDOUT",
		"steps[3].parallel.branches[0].pipeline ${name} LOBSTER_ARG_NAME",
		"steps[4].for_each.steps[0].pipeline $item.x LOBSTER_STEP_ITEM_X",
	}, got)
}

func TestStrictRefsRefusesRefsInPipelinesAtLoad(t *testing.T) {
	t.Parallel()
	_, err := flows.Parse("w.lobster", []byte("strict_refs: true\n"+pipelineSplicing))
	require.Error(t, err)
	for _, want := range []string{
		`w.lobster:8:5: steps[1].pipeline: step p pastes ${name} into its pipeline`,
		`w.lobster:10:5: steps[2].pipeline: step q pastes $s1.stdout into its pipeline`,
		`w.lobster:15:11: steps[3].parallel.branches[0].pipeline: step b pastes ${name}`,
		`w.lobster:20:9: steps[4].for_each.steps[0].pipeline: step sub pastes $item.x`,
		`"$LOBSTER_ARG_NAME" (quoted) in an exec --shell stage`,
		`(strict_refs is on)`,
	} {
		require.Contains(t, err.Error(), want)
	}
	require.NotContains(t, err.Error(), "step safe")
}
