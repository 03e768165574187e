package flows_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

func TestRunPipelineUnknownCommandIsARuntimeError(t *testing.T) {
	t.Parallel()
	stages, err := flows.ParsePipeline("head --n 1 | nosuch --x | json")
	require.NoError(t, err, "an unknown command is not a parse error")
	ran := false
	cmds := flows.Builtins().With(&flows.Command{Name: "head", Run: func(_ context.Context, c *flows.Call) (flows.StageOutput, error) {
		ran = true
		return flows.StageOutput{Items: c.Items}, nil
	}})
	res, err := flows.RunPipeline(context.Background(), stages, 0, []any{1.0}, cmds, nil)
	var unknown *flows.UnknownCommandError
	require.ErrorAs(t, err, &unknown)
	require.EqualError(t, err, "Unknown command: nosuch")
	require.True(t, ran, "stages before the unknown one run")
	require.Equal(t, []int{1}, res.Counts)
}

func TestRunPipelineHaltAndResume(t *testing.T) {
	t.Parallel()
	gate := &flows.Command{Name: "gate", Run: func(_ context.Context, c *flows.Call) (flows.StageOutput, error) {
		return flows.StageOutput{Items: []any{map[string]any{"type": "approval_request", "items": c.Items}}, Halt: true}, nil
	}}
	cmds := flows.Builtins().With(gate)
	stages, err := flows.ParsePipeline("where v>1 | gate | map --wrap w")
	require.NoError(t, err)
	in := []any{map[string]any{"v": 1.0}, map[string]any{"v": 2.0}}

	res, err := flows.RunPipeline(context.Background(), stages, 0, in, cmds, nil)
	require.NoError(t, err)
	require.Equal(t, 1, res.Halted)
	require.Equal(t, []int{1, 1}, res.Counts)
	req := res.Items[0].(map[string]any)
	require.Equal(t, "approval_request", req["type"])

	// Resuming runs the stages after the gate with the items that reached it.
	res, err = flows.RunPipeline(context.Background(), stages, res.Halted+1, req["items"].([]any), cmds, nil)
	require.NoError(t, err)
	require.Equal(t, -1, res.Halted)
	require.Equal(t, `[{"w":{"v":2}}]`, flows.Stringify(res.Items))
}

func TestRunPipelineRenderedIsSticky(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	stages, err := flows.ParsePipeline("json | head")
	require.NoError(t, err)
	res, err := flows.RunPipeline(context.Background(), stages, 0, []any{1.0}, flows.Builtins(), &out)
	require.NoError(t, err)
	require.True(t, res.Rendered, "a renderer anywhere means the caller must not print the items")
	require.Equal(t, []any{}, res.Items)
	require.Equal(t, "[\n  1\n]\n", out.String())
}

func TestRunPipelineStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stages, err := flows.ParsePipeline("head")
	require.NoError(t, err)
	_, err = flows.RunPipeline(ctx, stages, 0, nil, flows.Builtins(), nil)
	require.True(t, errors.Is(err, context.Canceled))
}

func TestCommandsListStage(t *testing.T) {
	t.Parallel()
	cmds := flows.Commands{}.With(
		&flows.Command{Name: "zeta", Description: "z", SideEffects: []string{"local_exec"}},
		flows.Builtins()["commands.list"],
	)
	stages, err := flows.ParsePipeline("commands.list")
	require.NoError(t, err)
	res, err := flows.RunPipeline(context.Background(), stages, 0, nil, cmds, nil)
	require.NoError(t, err)
	require.Len(t, res.Items, 2)
	require.Contains(t, flows.Stringify(res.Items[0]), `{"name":"commands.list",`)
	require.Equal(t, `{"name":"zeta","description":"z","sideEffects":["local_exec"]}`, flows.Stringify(res.Items[1]))
}

func TestBuiltinsArePure(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"commands.list", "dedupe", "email.triage", "groupBy", "head", "json", "map", "pick", "sort", "table", "template", "where", "workflows.list"},
		flows.Builtins().Names())
}
