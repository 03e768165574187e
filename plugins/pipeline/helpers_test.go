package pipeline_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// runner plays the gateway's task runner: it runs a task's command for
// real and finishes the task with its stdout (sdktest.Stdout), so the
// controller reads the result the gateway would record.
type runner struct {
	// logs, when set, is where stdout over sdk.InlineStdout is written,
	// one file a task, which the result names (sdk.Result.StdoutPath), as
	// the gateway's runner does with its log files.
	logs string
}

// run runs task t with /bin/sh (or its argv) as the runner would (its env on top of
// ours, its cwd, its input on stdin), records its stdout and finishes it
// succeeded or failed by exit status, delivering what follows.
func (r *runner) run(t *testing.T, h *sdktest.Harness, task *sdk.Task) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", task.Spec.Shell)
	if len(task.Spec.Argv) > 0 {
		cmd = exec.CommandContext(ctx, task.Spec.Argv[0], task.Spec.Argv[1:]...)
	}
	cmd.Env = os.Environ()
	for k, v := range task.Spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Dir = task.Spec.Cwd
	cmd.Stdin = bytes.NewReader([]byte(task.Spec.Input))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	status := sdk.TaskSucceeded
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		status = sdk.TaskFailed
	case err != nil:
		t.Fatalf("run task %s (%q): %v", task.ID, task.Spec.Shell, err)
	}
	h.FinishTask(task.ID, status, r.result(t, task, stdout.String()))
}

// result is what task finished with, having printed out.
func (r *runner) result(t *testing.T, task *sdk.Task, out string) sdktest.FinishOption {
	if r.logs == "" || len(out) <= sdk.InlineStdout {
		return sdktest.Stdout(out)
	}
	path := filepath.Join(r.logs, task.ID)
	require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
	sum := sha256.Sum256([]byte(out))
	res := sdk.Result{StdoutSHA256: hex.EncodeToString(sum[:]), StdoutBytes: int64(len(out)), Stdout: out, StdoutPath: path}
	if b := bytes.TrimSpace([]byte(out)); json.Valid(b) {
		res.JSON = b
	}
	return sdktest.Result(res)
}

// next runs the one active task of flow flowID and returns it.
func (r *runner) next(t *testing.T, h *sdktest.Harness, flowID string) *sdk.Task {
	t.Helper()
	task := active(t, h, flowID)
	r.run(t, h, task)
	return task
}

// active returns the one active task of flow flowID.
func active(t *testing.T, h *sdktest.Harness, flowID string) *sdk.Task {
	t.Helper()
	var found []*sdk.Task
	for _, task := range h.Tasks(flowID) {
		if task.Status.Active() {
			found = append(found, task)
		}
	}
	require.Len(t, found, 1, "flow %s should have one active task", flowID)
	return found[0]
}

// controller is the pipeline controller and the runner that runs its
// tasks.
type controller struct {
	sdk.Controller
	runner *runner
}

func newController() *controller {
	return &controller{Controller: pipeline.New(), runner: &runner{}}
}

// start starts a pipeline flow for testdata file name, as flowgate
// pipeline run does, from a fresh caller directory (with a sub/ in it).
func start(t *testing.T, h *sdktest.Harness, name string, args map[string]any) (*sdk.Flow, string) {
	t.Helper()
	file, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(t, err)
	cwd := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(cwd, "sub"), 0o755))
	if args == nil {
		args = map[string]any{}
	}
	return h.StartFlow(name, map[string]any{"file": file, "args": args, "cwd": cwd}), cwd
}

// pipelineState is a pipeline flow's state as the tests read it, with
// the fields of the flow the controller produced: its output (an output
// kept in a file read back) and its gate decisions.
type pipelineState struct {
	File      string                     `json:"file"`
	Results   map[string]json.RawMessage `json:"results"`
	Output    json.RawMessage            `json:"-"`
	Decisions map[string]json.RawMessage `json:"-"`
}

func readState(t *testing.T, f *sdk.Flow) (pipelineState, map[string]json.RawMessage) {
	t.Helper()
	var s pipelineState
	require.NoError(t, json.Unmarshal(f.State, &s))
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(f.State, &top))
	for _, key := range []string{"output", "output_file", "rendered", "rendered_file", "decisions"} {
		require.NotContains(t, top, key, "what the flow produced is a field of the flow, not of its state")
	}
	if f.Output != nil && f.Output.File == nil {
		s.Output = f.Output.Value
	}
	for step, d := range f.Decisions {
		if s.Decisions == nil {
			s.Decisions = map[string]json.RawMessage{}
		}
		s.Decisions[step] = json.RawMessage(jsonOf(t, d))
	}
	return s, top
}

// gateWait is the wait of a flow parked at a gate.
type gateWait struct {
	Kind                     string         `json:"kind"`
	Step                     string         `json:"step"`
	Prompt                   string         `json:"prompt"`
	Preview                  string         `json:"preview"`
	Items                    []any          `json:"items"`
	Schema                   map[string]any `json:"schema"`
	Subject                  any            `json:"subject"`
	ResumeToken              string         `json:"resume_token"`
	ApprovalID               string         `json:"approval_id"`
	InitiatedBy              string         `json:"initiated_by"`
	RequiredApprover         string         `json:"required_approver"`
	RequireDifferentApprover bool           `json:"require_different_approver"`
	Error                    string         `json:"error"`
}

func readWait(t *testing.T, f *sdk.Flow) gateWait {
	t.Helper()
	require.Equal(t, sdk.FlowWaiting, f.Status, "flow %s: %s", f.ID, f.BlockedSummary)
	var w gateWait
	require.NoError(t, json.Unmarshal(f.Wait, &w))
	return w
}

// decide answers the gate at step as the gateway does (the flow's
// Decisions, sdktest.Host.Decide) and delivers what follows; d is the
// decision's JSON fields.
func decide(t *testing.T, h *sdktest.Harness, flowID, step string, d map[string]any) *sdk.Flow {
	t.Helper()
	w := readWait(t, h.Flow(flowID))
	require.Equal(t, step, w.Step, "the flow waits at another gate")
	var dec sdk.Decision
	require.NoError(t, json.Unmarshal([]byte(jsonOf(t, d)), &dec))
	return h.Decide(flowID, dec)
}

// decideInState answers the gate at step as gateways did before
// Flow.Decisions: in the flow's state under "decisions", then resuming
// the flow, and delivers what follows.
func decideInState(t *testing.T, h *sdktest.Harness, flowID, step string, d map[string]any) *sdk.Flow {
	t.Helper()
	ctx := t.Context()
	f := h.Flow(flowID)
	var state map[string]any
	require.NoError(t, json.Unmarshal(f.State, &state))
	decisions, _ := state["decisions"].(map[string]any)
	if decisions == nil {
		decisions = map[string]any{}
	}
	d["at"] = time.Now().UTC().Format(time.RFC3339)
	decisions[step] = d
	state["decisions"] = decisions
	b, err := json.Marshal(state)
	require.NoError(t, err)
	f, err = h.Host().UpdateFlow(ctx, f.ID, f.Revision, sdk.FlowUpdate{State: b})
	require.NoError(t, err)
	_, err = h.Host().Resume(ctx, f.ID, f.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning})
	require.NoError(t, err)
	h.Drain(flowID)
	return h.Flow(flowID)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
