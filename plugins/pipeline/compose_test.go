package pipeline_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// byLabel returns flow flowID's task labelled label.
func byLabel(t *testing.T, h *sdktest.Harness, flowID, label string) *sdk.Task {
	t.Helper()
	for _, task := range h.Tasks(flowID) {
		if task.Label == label {
			return task
		}
	}
	require.Failf(t, "no task", "flow %s has no task %q", flowID, label)
	return nil
}

// activeLabels lists the labels of flow flowID's active tasks.
func activeLabels(h *sdktest.Harness, flowID string) []string {
	var out []string
	for _, task := range h.Tasks(flowID) {
		if task.Status.Active() {
			out = append(out, task.Label)
		}
	}
	return out
}

// redeliver delivers flow.started and task.finished for taskID (if any)
// twice and checks that nothing changed: no task, no write.
func redeliver(t *testing.T, h *sdktest.Harness, flowID, taskID string) {
	t.Helper()
	f := h.Flow(flowID)
	n := len(h.Tasks(flowID))
	for range 2 {
		require.NoError(t, h.Deliver(sdk.Event{FlowID: flowID, Seq: 1, Type: sdk.EventFlowStarted}))
		if taskID != "" {
			require.NoError(t, h.Deliver(sdk.Event{FlowID: flowID, Seq: 99, Type: sdk.EventTaskFinished, TaskID: taskID}))
		}
	}
	require.Len(t, h.Tasks(flowID), n, "a repeated event creates no task")
	require.Equal(t, f.Revision, h.Flow(flowID).Revision, "a repeated event writes nothing")
}

func TestParallelAll(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, cwd := start(t, h, "parallel.lobster", nil)
		require.ElementsMatch(t, []string{"fan/left", "fan/right"}, activeLabels(h, f.ID), "every branch starts at once")
		require.Equal(t, "fan", h.Flow(f.ID).CurrentStep)
		left, right := byLabel(t, h, f.ID, "fan/left"), byLabel(t, h, f.ID, "fan/right")
		require.Equal(t, f.ID+":fan/left:0", left.IdempotencyKey)
		require.Equal(t, f.ID+":fan/right:0", right.IdempotencyKey)
		require.Equal(t, map[string]string{"WF": "wf", "STEP": "step", "SIDE": "L"}, pick(left.Spec.Env, "WF", "STEP", "SIDE"))
		require.Equal(t, cwd, left.Spec.Cwd)
		require.Equal(t, cwd+"/sub", right.Spec.Cwd)
		require.Equal(t, "hello", right.Spec.Input)
		redeliver(t, h, f.ID, "")

		c.runner.run(t, h, left)
		require.Equal(t, []string{"fan/right"}, activeLabels(h, f.ID), "wait: all waits for every branch")
		redeliver(t, h, f.ID, left.ID)

		c.runner.run(t, h, right)
		after := c.runner.next(t, h, f.ID)
		require.Equal(t, "echo \"L hello\"", after.Spec.Shell)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"fan","stdout":"{\"left\":{\"side\":\"L\",\"step\":\"step\",\"wf\":\"wf\"}}","json":{"left":{"side":"L","step":"step","wf":"wf"}}}`, string(st.Results["fan"]))
		require.JSONEq(t, `{"id":"right","stdout":"hello"}`, string(st.Results["right"]))
		require.JSONEq(t, `{"id":"left","stdout":"{\"side\":\"L\",\"step\":\"step\",\"wf\":\"wf\"}","json":{"side":"L","step":"step","wf":"wf"}}`, string(st.Results["left"]))
		require.JSONEq(t, `["L hello\n"]`, string(st.Output))
	})
}

func pick(m map[string]string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

func TestParallelAny(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "parallel-any.lobster", nil)
		require.Len(t, h.Tasks(f.ID), 2)
		redeliver(t, h, f.ID, "")
		fast := byLabel(t, h, f.ID, "race/fast")
		c.runner.run(t, h, fast)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, "the first success ends the step: %s", f.BlockedSummary)
		require.Empty(t, activeLabels(h, f.ID), "the loser is cancelled")
		require.Equal(t, sdk.TaskCancelled, byLabel(t, h, f.ID, "race/slow").Status)
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"race","stdout":"{\"won\":true}\n","json":{"fast":{"won":true}}}`, string(st.Results["race"]))
		require.NotContains(t, st.Results, "slow")
		require.JSONEq(t, `[{"fast":{"won":true}}]`, string(st.Output))

		redeliver(t, h, f.ID, byLabel(t, h, f.ID, "race/slow").ID)
		require.Equal(t, f.Revision, h.Flow(f.ID).Revision, "the loser's end changes nothing")
	})
}

// TestParallelAnyFirstSettledWins: as Promise.race in Lobster, a branch
// that fails first fails the step, even if another would succeed.
func TestParallelAnyFirstSettledWins(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "parallel-any-fail.lobster", nil)
		c.runner.run(t, h, byLabel(t, h, f.ID, "race/broken"))
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, "Parallel branch failed")
	})
}

func TestParallelOnError(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "parallel-fail.lobster", nil)
		bad := byLabel(t, h, f.ID, "fan/bad")
		c.runner.run(t, h, bad)
		require.Equal(t, []string{"fan/good"}, activeLabels(h, f.ID), "a failed branch waits for the others")
		redeliver(t, h, f.ID, bad.ID)
		c.runner.run(t, h, byLabel(t, h, f.ID, "fan/good"))
		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		require.Len(t, h.Tasks(f.ID), 3)
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"fan","error":true,"errorMessage":"Parallel branch failed: workflow command failed (1): partial"}`, string(st.Results["fan"]))
		require.JSONEq(t, `["after\n"]`, string(st.Output))
	})
}

func TestForEachSequential(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "foreach.lobster", nil)
		c.runner.next(t, h, f.ID)
		var shells []string
		for range 5 {
			task := active(t, h, f.ID)
			redeliver(t, h, f.ID, "")
			c.runner.run(t, h, task)
			shells = append(shells, task.Label+" "+task.IdempotencyKey[len(f.ID):]+" "+task.Spec.Shell)
		}
		require.Equal(t, []string{
			`each/show[0] :each/show:0 printf '%s-%s' "0" "a"`,
			`each/wrap[0] :each/wrap:0 printf '{"n":"%s","prev":"%s"}' "a" "0-a"`,
			`each/show[1] :each/show:1 printf '%s-%s' "1" "b"`,
			`each/show[2] :each/show:2 printf '%s-%s' "2" "c"`,
			`each/wrap[2] :each/wrap:2 printf '{"n":"%s","prev":"%s"}' "c" "2-c"`,
		}, shells)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		rows := `[{"name":"a","i":0,"show":"0-a","wrap":{"n":"a","prev":"0-a"}},{"name":"b","i":1,"show":"1-b"},{"name":"c","i":2,"show":"2-c","wrap":{"n":"c","prev":"2-c"}}]`
		require.JSONEq(t, rows, string(st.Output))
		var res struct {
			Stdout string `json:"stdout"`
		}
		require.NoError(t, jsonUnmarshal(st.Results["each"], &res))
		require.JSONEq(t, rows, res.Stdout)
		require.Len(t, h.Tasks(f.ID), 6)
	})
}

// The items of a batch start at once; a later batch starts when the
// batch before it has ended, each of its items sleeping pause_ms first.
func TestForEachBatches(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "foreach-batch.lobster", nil)
		require.Equal(t, []string{"each/double[0]", "each/double[1]"}, activeLabels(h, f.ID), "a batch's items start at once")
		redeliver(t, h, f.ID, "")
		first, second := byLabel(t, h, f.ID, "each/double[0]"), byLabel(t, h, f.ID, "each/double[1]")
		require.Equal(t, "echo $(( 10 * 2 ))", first.Spec.Shell)
		require.Equal(t, "echo $(( 20 * 2 ))", second.Spec.Shell, "no pause inside a batch")
		c.runner.run(t, h, second)
		require.Equal(t, []string{"each/double[0]"}, activeLabels(h, f.ID), "the next batch waits for the whole batch")
		redeliver(t, h, f.ID, second.ID)
		c.runner.run(t, h, first)

		third := active(t, h, f.ID)
		require.Equal(t, f.ID+":each/double:2", third.IdempotencyKey)
		require.Equal(t, "sleep 0.02; echo $(( 30 * 2 ))", third.Spec.Shell, "pause_ms before a later batch")
		c.runner.run(t, h, third)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `[{"item":10,"index":0,"double":20},{"item":20,"index":1,"double":40},{"item":30,"index":2,"double":60}]`, string(st.Output))
	})
}

// Without batch_size, every item starts at once, each item's sub-steps
// in order; items that end out of order still give their rows in item
// order.
func TestForEachFansOut(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "foreach-fan.lobster", nil)
		require.Equal(t, []string{"each/show[0]", "each/show[1]", "each/show[2]", "each/show[3]"}, activeLabels(h, f.ID))
		redeliver(t, h, f.ID, "")
		for _, i := range []int{3, 1, 0, 2} {
			c.runner.run(t, h, byLabel(t, h, f.ID, fmt.Sprintf("each/show[%d]", i)))
		}
		require.ElementsMatch(t, []string{"each/wrap[0]", "each/wrap[1]", "each/wrap[2]", "each/wrap[3]"}, activeLabels(h, f.ID), "each item goes on as its own task ends")
		for _, i := range []int{2, 0, 3, 1} {
			c.runner.run(t, h, byLabel(t, h, f.ID, fmt.Sprintf("each/wrap[%d]", i)))
		}
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		require.Len(t, h.Tasks(f.ID), 8)
		st, _ := readState(t, f)
		require.JSONEq(t, `[{"item":"a","index":0,"show":"0-a","wrap":"[a]"},{"item":"b","index":1,"show":"1-b","wrap":"[b]"},`+
			`{"item":"c","index":2,"show":"2-c","wrap":"[c]"},{"item":"d","index":3,"show":"3-d","wrap":"[d]"}]`, string(st.Output))
	})
}

func TestForEachOnError(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "foreach-fail.lobster", nil)
		c.runner.run(t, h, byLabel(t, h, f.ID, "each/check[0]"))
		redeliver(t, h, f.ID, "")
		bad := byLabel(t, h, f.ID, "each/check[1]")
		c.runner.run(t, h, bad)
		redeliver(t, h, f.ID, bad.ID)
		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		require.Len(t, h.Tasks(f.ID), 3, "no later item starts after a failure")
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"each","error":true,"errorMessage":"for_each item 1, step check: workflow command failed (1): test \"bad\" != bad \u0026\u0026 echo fine"}`, string(st.Results["each"]))
		require.JSONEq(t, `["after\n"]`, string(st.Output))
	})
}

func TestSubWorkflow(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, cwd := start(t, h, "workflow-args.lobster", map[string]any{"who": "flowgate"})
		hi := active(t, h, f.ID)
		require.Equal(t, f.ID+":nested>hi:0", hi.IdempotencyKey)
		require.Equal(t, "nested>hi", hi.Label)
		require.Equal(t, cwd, hi.Spec.Cwd)
		require.Equal(t, "nested>hi", h.Flow(f.ID).CurrentStep)
		redeliver(t, h, f.ID, "")
		c.runner.run(t, h, hi)
		redeliver(t, h, f.ID, hi.ID)
		after := c.runner.next(t, h, f.ID)
		require.Equal(t, `echo "got hi flowgate"`, after.Spec.Shell)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"nested","stdout":"{\"greeting\":\"hi flowgate\",\"from\":\"parent\",\"n\":\"2\"}","json":{"greeting":"hi flowgate","from":"parent","n":"2"}}`, string(st.Results["nested"]))
		require.JSONEq(t, `{"id":"skipme","skipped":true}`, string(st.Results["nested>skipme"]))
		require.Contains(t, st.Results, "nested>hi")
		require.JSONEq(t, `["got hi flowgate\n"]`, string(st.Output))
	})
}

func TestSubWorkflowOnError(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "workflow-fail.lobster", nil)
		c.runner.next(t, h, f.ID)
		boom := c.runner.next(t, h, f.ID)
		redeliver(t, h, f.ID, boom.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		require.Len(t, h.Tasks(f.ID), 2)
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"nested","error":true,"errorMessage":"step boom failed: workflow command failed (1): partial"}`, string(st.Results["nested"]))
		require.JSONEq(t, `{"id":"never","skipped":true}`, string(st.Results["never"]))
		require.JSONEq(t, `[]`, string(st.Output))
	})
}

func TestSubWorkflowGate(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "workflow-gate.lobster", nil)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.True(t, strings.HasPrefix(f.BlockedSummary, "step nested failed: sub-workflow halted for approval."), f.BlockedSummary)
		require.Empty(t, h.Tasks(f.ID))
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestExamples runs the shell-only example pipelines to the end, running
// every active task each round.
func TestExamples(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"for-each.lobster": `[{"lines":4,"words":10}]`,
		"parallel.lobster": `["first to answer quick\n"]`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newController()
			sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
				file, err := filepath.Abs(filepath.Join("..", "..", "examples", "pipelines", name))
				require.NoError(t, err)
				f := h.StartFlow(name, map[string]any{"file": file, "args": map[string]any{}, "cwd": t.TempDir()})
				for range 20 {
					if f = h.Flow(f.ID); f.Status.Terminal() {
						break
					}
					for _, task := range h.Tasks(f.ID) {
						// Read it again: running one task may have cancelled another.
						if cur := taskByID(h, f.ID, task.ID); cur.Status.Active() && !cur.CancelRequested() && !h.Flow(f.ID).Status.Terminal() {
							c.runner.run(t, h, cur)
						}
					}
				}
				require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
				st, _ := readState(t, f)
				require.JSONEq(t, want, string(st.Output))
			})
		})
	}
}

// taskByID returns the current record of task id of flow flowID.
func taskByID(h *sdktest.Harness, flowID, id string) *sdk.Task {
	for _, t := range h.Tasks(flowID) {
		if t.ID == id {
			return t
		}
	}
	return nil
}
