package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// TestTypedPipelineSteps runs a file mixing command steps and pipeline:
// steps: step refs into and out of pipelines, exec stages as tasks (argv
// and shell), pure stages in the controller, renderers and conditions.
func TestTypedPipelineSteps(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "typed.lobster", nil)
		c.runner.next(t, h, f.ID) // list

		cat := c.runner.next(t, h, f.ID)
		require.Equal(t, f.ID+":big/stage2:0", cat.IdempotencyKey, "exec is the step's third stage")
		require.Equal(t, "big/stage2", cat.Label)
		require.Equal(t, []string{"cat"}, cat.Spec.Argv, "exec without --shell runs no shell")
		require.JSONEq(t, `[{"n":2,"name":"b"},{"n":3,"name":"c"}]`, cat.Spec.Input, "pure stages ran before it")

		echo := c.runner.next(t, h, f.ID)
		require.Equal(t, "cat; echo", echo.Spec.Shell)
		require.Equal(t, "b\nc", echo.Spec.Input, "--stdin raw: strings as they are, one per line")
		c.runner.next(t, h, f.ID) // printf
		c.runner.next(t, h, f.ID) // echo {"k":1}
		shout := c.runner.next(t, h, f.ID)
		require.Equal(t, "X\nY", shout.Spec.Input)

		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"big","stdout":"[{\"name\":\"b\"},{\"name\":\"c\"}]","json":[{"name":"b"},{"name":"c"}]}`, string(st.Results["big"]))
		// Strings are joined by newlines; several items make a JSON array.
		require.JSONEq(t, `{"id":"names","stdout":"b\nc","json":["b","c"]}`, string(st.Results["names"]))
		// A renderer's text is the stdout, and the json is what it parses
		// to; rendered marks the sink.
		require.JSONEq(t, `{"id":"one","stdout":"[\n  {\n    \"k\": 1\n  }\n]\n","json":[{"k":1}],"rendered":true}`, string(st.Results["one"]))
		require.JSONEq(t, `["X\nY"]`, string(st.Output))
	})
}

// TestPipelineString runs a flow started for a pipeline string: its one
// step's items are the flow's output.
func TestPipelineString(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("p", map[string]any{"pipeline": `exec --json --shell "echo '[{\"a\":1},{\"a\":2},{\"a\":3}]'" | where a>=2 | map --unwrap a`, "args": map[string]any{}, "cwd": t.TempDir()})
		task := c.runner.next(t, h, f.ID)
		require.Equal(t, f.ID+":pipeline/stage0:0", task.IdempotencyKey)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `[2,3]`, string(st.Output))
	})
}

func TestPipelineStringParseErrorFailsTheFlow(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("p", map[string]any{"pipeline": "head | | json", "args": map[string]any{}, "cwd": t.TempDir()})
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, `parse the pipeline "head | | json": Empty command stage`)
	})
}

// TestApproveStageParksAndResumes: an approve stage in the middle of a
// pipeline parks the flow with the items that reached it; approved, the
// later stages get the same items (the exec before it is not run again).
func TestApproveStageParksAndResumes(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		text := `exec --json --shell "echo '[{\"a\":1},{\"a\":2}]'" | approve --prompt 'Send these?' --preview-from-stdin | map --unwrap a`
		f := h.StartFlow("p", map[string]any{"pipeline": text, "args": map[string]any{}, "cwd": t.TempDir()})
		c.runner.next(t, h, f.ID)
		w := readWait(t, h.Flow(f.ID))
		require.Equal(t, "approval", w.Kind)
		require.Equal(t, "pipeline/stage1", w.Step)
		require.Equal(t, "Send these?", w.Prompt)
		require.Equal(t, []any{map[string]any{"a": 1.0}, map[string]any{"a": 2.0}}, w.Items)
		require.Equal(t, "[\n  {\n    \"a\": 1\n  },\n  {\n    \"a\": 2\n  }\n]", w.Preview)
		require.Equal(t, f.ID+":pipeline/stage1", w.ResumeToken)

		f = decide(t, h, f.ID, w.Step, map[string]any{"approved": true, "by": "ann"})
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		require.Len(t, h.Tasks(f.ID), 1, "the exec stage ran once")
		st, _ := readState(t, f)
		require.JSONEq(t, `[1,2]`, string(st.Output))
	})
}

func TestApproveStageDeniedCancels(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("p", map[string]any{"pipeline": "approve | json", "args": map[string]any{}, "cwd": t.TempDir()})
		w := readWait(t, h.Flow(f.ID))
		require.Equal(t, "Approve?", w.Prompt)
		require.Empty(t, w.Preview, "no preview without --preview-from-stdin")
		f = decide(t, h, f.ID, w.Step, map[string]any{"approved": false})
		require.Equal(t, sdk.FlowCancelled, f.Status)
	})
}

// TestAskStage: ask parks the flow at an input gate; a response its
// schema rejects keeps it waiting; an accepted one is the stage's item.
func TestAskStage(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("p", map[string]any{"pipeline": `exec echo draft | ask --prompt Review? --subject-from-stdin | pick decision`, "args": map[string]any{}, "cwd": t.TempDir()})
		c.runner.next(t, h, f.ID)
		w := readWait(t, h.Flow(f.ID))
		require.Equal(t, "input", w.Kind)
		require.Equal(t, "pipeline/stage1", w.Step)
		require.Equal(t, "Review?", w.Prompt)
		require.Equal(t, map[string]any{"text": "draft"}, w.Subject)
		require.Equal(t, []any{"decision"}, w.Schema["required"])

		f = decide(t, h, f.ID, w.Step, map[string]any{"response": map[string]any{"decision": "maybe"}})
		w = readWait(t, f)
		require.Contains(t, w.Error, "response failed schema validation")

		f = decide(t, h, f.ID, w.Step, map[string]any{"response": map[string]any{"decision": "approve", "feedback": "ok"}})
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `[{"decision":"approve"}]`, string(st.Output))
	})
}

// TestApproveStageBoundsItsItems: the items an approve stage keeps in the
// flow's wait are bounded (192 KiB of JSON), counted when cut, and the
// approved run goes on with all of them.
func TestApproveStageBoundsItsItems(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		text := `exec seq 1 40000 | template --text '{{.}}-padding-padding-padding' | approve | groupBy --key nothing | map --unwrap count`
		f := h.StartFlow("p", map[string]any{"pipeline": text, "args": map[string]any{}, "cwd": t.TempDir()})
		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		require.Less(t, len(f.Wait), 200<<10, "the wait stays bounded")
		var w struct {
			Items          []any `json:"items"`
			ItemsTotal     int   `json:"items_total"`
			ItemsTruncated bool  `json:"items_truncated"`
		}
		require.NoError(t, jsonUnmarshal(f.Wait, &w))
		require.True(t, w.ItemsTruncated)
		require.Equal(t, 40000, w.ItemsTotal)
		require.Equal(t, "1-padding-padding-padding", w.Items[0])
		require.Less(t, len(w.Items), 40000)

		f = decide(t, h, f.ID, readWait(t, f).Step, map[string]any{"approved": true})
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `[40000]`, string(st.Output), "every item went on")
	})
}
