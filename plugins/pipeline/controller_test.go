package pipeline_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

func TestInfo(t *testing.T) {
	t.Parallel()
	info, err := pipeline.New().Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, "pipeline", info.Name)
	require.Equal(t, sdk.APIVersion, info.APIVersion)
}

func TestShellPipeline(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, cwd := start(t, h, "shell.lobster", map[string]any{"name": "flowgate"})
		require.Equal(t, sdk.FlowRunning, f.Status)
		require.Equal(t, "greet", f.CurrentStep)

		greet := c.runner.next(t, h, f.ID)
		require.Equal(t, f.ID+":greet:0", greet.IdempotencyKey)
		require.Equal(t, "greet", greet.Label)
		require.Equal(t, cwd, greet.Spec.Cwd)
		require.Equal(t, "flowgate", greet.Spec.Env["WHO"])
		require.Equal(t, "flowgate", greet.Spec.Env["LOBSTER_ARG_NAME"])
		require.Equal(t, "hello", greet.Spec.Env["LOBSTER_ARG_GREETING"])
		require.JSONEq(t, `{"name":"flowgate","greeting":"hello"}`, greet.Spec.Env["LOBSTER_ARGS_JSON"])
		require.Equal(t, sdk.Duration(5*time.Second), greet.Spec.Timeout)
		require.Equal(t, &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(100 * time.Millisecond), MaxBackoff: sdk.Duration(400 * time.Millisecond)}, greet.Spec.Retry)

		shout := c.runner.next(t, h, f.ID)
		require.Equal(t, "hello flowgate", shout.Spec.Input)
		require.Equal(t, filepath.Join(cwd, "sub"), shout.Spec.Cwd)
		require.Nil(t, shout.Spec.Retry)

		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		require.Len(t, h.Tasks(f.ID), 2, "the skipped step runs no task")
		st, top := readState(t, f)
		keys := make([]string, 0, len(top))
		for k := range top {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		require.Equal(t, []string{"args", "cwd", "file", "plan", "results"}, keys, "the output is the flow's, not the state's")
		require.Equal(t, &sdk.Output{Value: json.RawMessage(`["HELLO FLOWGATE"]`)}, f.Output)
		require.JSONEq(t, `{"id":"greet","stdout":"{\"text\":\"hello flowgate\",\"arg\":\"flowgate\",\"args\":{\"greeting\":\"hello\",\"name\":\"flowgate\"}}",
			"json":{"text":"hello flowgate","arg":"flowgate","args":{"greeting":"hello","name":"flowgate"}}}`, string(st.Results["greet"]))
		require.JSONEq(t, `{"id":"shout","stdout":"HELLO FLOWGATE"}`, string(st.Results["shout"]))
		require.JSONEq(t, `{"id":"never","skipped":true}`, string(st.Results["never"]))
		require.JSONEq(t, `["HELLO FLOWGATE"]`, string(st.Output))
	})
}

func TestRedeliveryDoesNothingTwice(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "shell.lobster", nil)
		started := sdk.Event{FlowID: f.ID, Seq: 1, Type: sdk.EventFlowStarted}
		for range 2 {
			require.NoError(t, h.Deliver(started))
		}
		require.Len(t, h.Tasks(f.ID), 1)
		require.Equal(t, f.Revision, h.Flow(f.ID).Revision, "a repeated event writes nothing")

		greet := c.runner.next(t, h, f.ID)
		finished := sdk.Event{FlowID: f.ID, Seq: 99, Type: sdk.EventTaskFinished, TaskID: greet.ID}
		rev := h.Flow(f.ID).Revision
		for range 2 {
			require.NoError(t, h.Deliver(finished))
			require.NoError(t, h.Deliver(started))
		}
		require.Len(t, h.Tasks(f.ID), 2)
		require.Equal(t, rev, h.Flow(f.ID).Revision)

		c.runner.next(t, h, f.ID)
		done := h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, done.Status)
		require.NoError(t, h.Deliver(finished), "an event for an ended flow is acknowledged")
		require.Equal(t, done.Revision, h.Flow(f.ID).Revision)
	})
}

func TestOnError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode    string
		status  sdk.FlowStatus
		tasks   int
		results map[string]string
		output  string
	}{
		{mode: "stop", status: sdk.FlowFailed, tasks: 1},
		{mode: "continue", status: sdk.FlowSucceeded, tasks: 3, output: `["done\n"]`, results: map[string]string{
			"broken": `{"id":"broken","error":true,"errorMessage":"workflow command failed (1): partial"}`,
			"after":  `{"id":"after","stdout":"{\"ok\":true}\n","json":{"ok":true}}`,
		}},
		{mode: "skip_rest", status: sdk.FlowSucceeded, tasks: 1, output: `[]`, results: map[string]string{
			"broken": `{"id":"broken","error":true,"errorMessage":"workflow command failed (1): partial"}`,
			"after":  `{"id":"after","skipped":true}`,
			"last":   `{"id":"last","skipped":true}`,
		}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			c := newController()
			sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
				f, _ := start(t, h, "onerror-"+tc.mode+".lobster", nil)
				broken := c.runner.next(t, h, f.ID)
				for range tc.tasks - 1 {
					c.runner.next(t, h, f.ID)
				}
				f = h.Flow(f.ID)
				require.Equal(t, tc.status, f.Status, f.BlockedSummary)
				require.Len(t, h.Tasks(f.ID), tc.tasks)
				st, _ := readState(t, f)
				if tc.mode == "stop" {
					require.Equal(t, broken.ID, f.BlockedTaskID)
					require.Equal(t, "step broken failed: workflow command failed (1): partial", f.BlockedSummary)
					require.Empty(t, st.Results)
					require.Nil(t, st.Output)
					return
				}
				for id, want := range tc.results {
					require.JSONEq(t, want, string(st.Results[id]), id)
				}
				require.JSONEq(t, tc.output, string(st.Output))
			})
		})
	}
}

func TestApproval(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		for _, approved := range []bool{true, false} {
			f, _ := start(t, h, "approval.lobster", nil)
			c.runner.next(t, h, f.ID)
			f = h.Flow(f.ID)
			w := readWait(t, f)
			require.Equal(t, gateWait{
				Kind: "approval", Step: "plan", Prompt: "Ship it?", Preview: `{"files":["a","b"]}`,
				Items: []any{map[string]any{"files": []any{"a", "b"}}}, ResumeToken: f.ID + ":plan", ApprovalID: w.ApprovalID,
			}, w)
			require.Regexp(t, `^[0-9a-f]{8}$`, w.ApprovalID)
			require.Equal(t, "plan", f.CurrentStep)

			f = decide(t, h, f.ID, "plan", map[string]any{"approved": approved, "by": "alice"})
			st, _ := readState(t, f)
			if approved {
				require.Equal(t, sdk.FlowRunning, f.Status)
				c.runner.next(t, h, f.ID)
				f = h.Flow(f.ID)
				require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
				st, _ = readState(t, f)
				require.JSONEq(t, `{"id":"plan","stdout":"{\"files\":[\"a\",\"b\"]}\n","json":{"files":["a","b"]},"approved":true,"approvedBy":"alice"}`, string(st.Results["plan"]))
				require.JSONEq(t, `["shipped\n"]`, string(st.Output))
				continue
			}
			require.Equal(t, sdk.FlowCancelled, f.Status, "a denied approval cancels the run")
			require.Len(t, h.Tasks(f.ID), 1)
			require.JSONEq(t, `{"id":"plan","stdout":"{\"files\":[\"a\",\"b\"]}\n","json":{"files":["a","b"]},"approved":false,"approvedBy":"alice"}`, string(st.Results["plan"]))
			require.Nil(t, st.Output)
		}
	})
}

func TestApprovalIdentity(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "approver.lobster", nil)
		require.Empty(t, h.Tasks(f.ID), "an approval-only step runs no task")
		w := readWait(t, f)
		require.Equal(t, "Release?", w.Prompt)
		require.Equal(t, "release 1.2", w.Preview)
		require.Equal(t, []any{}, w.Items)
		require.Equal(t, "bob", w.InitiatedBy)
		require.Equal(t, "alice", w.RequiredApprover)

		yes := true
		_, err := h.Host().Decide(f.ID, sdk.Decision{Approved: &yes, By: "bob"})
		require.ErrorIs(t, err, sdk.ErrInvalid, "the host refuses a wrong approver at once")
		require.ErrorContains(t, err, "Workflow step gate approval requires approver 'alice', got 'bob'")
		require.Equal(t, f.Revision, h.Flow(f.ID).Revision, "the refusal changes nothing")
		require.Empty(t, readWait(t, h.Flow(f.ID)).Error)

		f = decide(t, h, f.ID, "gate", map[string]any{"approved": true, "by": "alice"})
		require.Equal(t, sdk.FlowRunning, f.Status, f.BlockedSummary)
		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status)
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"gate","stdout":"release 1.2","approved":true,"approvedBy":"alice","initiatedBy":"bob"}`, string(st.Results["gate"]))
	})
}

// A flow a gateway of before Flow.Decisions answered has the answer in
// its state: the controller reads it there, and still refuses a wrong
// approver itself, keeping the flow at the gate with the reason.
func TestDecisionsInTheStateOfAnOlderGateway(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "approver.lobster", nil)
		f = decideInState(t, h, f.ID, "gate", map[string]any{"approved": true, "by": "bob"})
		w := readWait(t, f)
		require.Equal(t, "Workflow step gate approval requires approver 'alice', got 'bob'", w.Error)

		f = decideInState(t, h, f.ID, "gate", map[string]any{"approved": true, "by": "alice"})
		require.Equal(t, sdk.FlowRunning, f.Status, f.BlockedSummary)
		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		var st struct {
			Results map[string]json.RawMessage `json:"results"`
		}
		require.NoError(t, json.Unmarshal(f.State, &st))
		require.JSONEq(t, `{"id":"gate","stdout":"release 1.2","approved":true,"approvedBy":"alice","initiatedBy":"bob"}`, string(st.Results["gate"]))
	})
}

func TestInput(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "input.lobster", nil)
		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		w := readWait(t, f)
		require.Equal(t, gateWait{
			Kind: "input", Step: "review", Prompt: "Review the draft?",
			Schema:      map[string]any{"type": "object", "properties": map[string]any{"decision": map[string]any{"type": "string"}}, "required": []any{"decision"}},
			Subject:     map[string]any{"title": "v1"},
			ResumeToken: f.ID + ":review", ApprovalID: w.ApprovalID,
		}, w)
		require.Regexp(t, `^[0-9a-f]{8}$`, w.ApprovalID, "an input gate has a short id, as an approval has")

		f = decide(t, h, f.ID, "review", map[string]any{"response": map[string]any{"decision": 3}, "by": "alice"})
		w = readWait(t, f)
		require.Equal(t, "Workflow input step review response failed schema validation at /decision: must be string", w.Error)
		require.Equal(t, "review", w.Step)

		f = decide(t, h, f.ID, "review", map[string]any{"response": map[string]any{"decision": "approve"}, "by": "alice"})
		require.Equal(t, sdk.FlowRunning, f.Status, f.BlockedSummary)
		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status)
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"review","subject":{"title":"v1"},"response":{"decision":"approve"}}`, string(st.Results["review"]))
		require.JSONEq(t, `["published\n"]`, string(st.Output))
	})
}

func TestBadState(t *testing.T) {
	t.Parallel()
	sdktest.Run(t, pipeline.New(), func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("no file", map[string]any{"args": map[string]any{}})
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, `names no workflow file`)

		f = h.StartFlow("missing file", map[string]any{"file": filepath.Join(t.TempDir(), "gone.lobster")})
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, "load workflow")
	})
}

// racing bumps a flow's revision behind the controller's back while it
// handles an event, once armed.
type racing struct {
	sdk.Controller
	armed atomic.Bool
}

func (c *racing) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	if c.armed.Load() {
		h = racyHost{h}
	}
	return c.Controller.HandleEvent(ctx, h, ev)
}

type racyHost struct{ sdk.Host }

// ListTasks changes the flow after the controller read it.
func (h racyHost) ListTasks(ctx context.Context, flowID string) ([]*sdk.Task, error) {
	f, err := h.GetFlow(ctx, flowID)
	if err != nil {
		return nil, err
	}
	step := "elsewhere"
	if _, err := h.UpdateFlow(ctx, flowID, f.Revision, sdk.FlowUpdate{CurrentStep: &step}); err != nil {
		return nil, err
	}
	return h.Host.ListTasks(ctx, flowID)
}

func TestRevisionConflictIsReturned(t *testing.T) {
	t.Parallel()
	c := &racing{Controller: pipeline.New()}
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		c.armed.Store(true)
		file, err := filepath.Abs("testdata/shell.lobster")
		require.NoError(t, err)
		f, err := h.Host().NewFlow(pipeline.Name, "race", []byte(`{"file":`+jsonOf(t, file)+`,"cwd":`+jsonOf(t, t.TempDir())+`}`))
		require.NoError(t, err)
		started := h.Host().Events(f.ID)[0]

		err = h.Deliver(started)
		require.ErrorIs(t, err, sdk.ErrRevisionConflict)
		require.Empty(t, h.Tasks(f.ID), "nothing is created on a conflict")

		c.armed.Store(false)
		require.NoError(t, h.Deliver(started), "the redelivered event goes through")
		require.Len(t, h.Tasks(f.ID), 1)
	})
}

func TestTimeoutAndRequestedApproval(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "timeout.lobster", nil)
		slow := active(t, h, f.ID)
		require.Equal(t, sdk.Duration(50*time.Millisecond), slow.Spec.Timeout)
		h.FinishTask(slow.ID, sdk.TaskTimedOut)

		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		w := readWait(t, f)
		require.Equal(t, "Go?", w.Prompt, "the step's own JSON asks for approval")
		require.Equal(t, []any{1.0}, w.Items)
		require.Equal(t, "all of it", w.Preview)
		st, _ := readState(t, f)
		require.JSONEq(t, `{"id":"slow","error":true,"errorMessage":"Step 'slow' timed out after 50ms"}`, string(st.Results["slow"]))
	})
}

// TestGateTimeout: with a gate timeout in the invocation, a gate's wait
// carries its deadline, kept when the gate parks again after a refused
// answer; a denial (the gateway's gate-expired) ends even an input gate's
// run as cancelled.
func TestGateTimeout(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		file, err := filepath.Abs(filepath.Join("testdata", "input.lobster"))
		require.NoError(t, err)
		before := time.Now()
		f := h.StartFlow("input", map[string]any{"file": file, "args": map[string]any{}, "cwd": t.TempDir(), "gate_timeout_ms": 3600000})
		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		var w sdk.Wait
		require.NoError(t, json.Unmarshal(f.Wait, &w))
		require.Equal(t, "review", w.Step)
		require.WithinRange(t, w.Until, before.Add(time.Hour), time.Now().Add(time.Hour))

		f = decide(t, h, f.ID, "review", map[string]any{"response": map[string]any{"decision": 3}, "by": "alice"})
		var again sdk.Wait
		require.NoError(t, json.Unmarshal(f.Wait, &again))
		require.NotEmpty(t, again.Error)
		require.Equal(t, w.Until, again.Until, "a refused answer does not restart the clock")

		f = decide(t, h, f.ID, "review", map[string]any{"approved": false, "by": "flowgate", "reason": sdk.ReasonGateExpired})
		require.Equal(t, sdk.FlowCancelled, f.Status, "an expired input gate cancels the run")
		require.Len(t, h.Tasks(f.ID), 1, "nothing after the gate ran")
	})
}
