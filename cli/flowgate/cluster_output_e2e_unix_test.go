package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// TestStepOutputIsReadFromAnyGateway runs a pipeline whose first step
// prints more than sdk.InlineStdout on one gateway (a) while another (b)
// holds the flow's event stream, and whose second step's result is too
// large for the flow's state, so the controller keeps it aside. Then it
// moves the stream to a third gateway (c) by stopping b, and has the
// last steps read both. Each gateway stands for a machine of its own:
// the log file that holds the first step's stdout is removed before any
// controller reads it, as it would be missing on another machine, and
// each has a home (and data directory) of its own. What the steps
// printed must still reach both controllers: the first from the task's
// record, the second from the value kept in the store.
func TestStepOutputIsReadFromAnyGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real gateway processes on an embedded etcd")
	}
	// A long lease: b is paused for a while, and must stay a member.
	f := newFleet(t, 30*time.Second)
	const printed = 6000 // over sdk.InlineStdout, under the pipeline's 256 KiB
	wf := filepath.Join(f.work, "big.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: big
steps:
  - id: one
    run: head -c 6000 /dev/zero | tr '\0' x
  - id: rows
    run: printf '["%s"]' "$(head -c 3000 /dev/zero | tr '\0' y)"
  - id: gate
    approval: Go on?
  - id: two
    run: wc -c
    stdin: $one.stdout
  - id: three
    run: wc -c
    stdin: $rows.stdout
`), 0o600))
	ctx := context.Background()

	// b is alone and drained: it holds the flow's stream and runs none
	// of its tasks.
	b := f.join("b")
	require.NoError(t, f.es.Drain(ctx, b.id))
	polltest.Until(t, "gateway b to see it is drained", func() bool {
		rec, err := f.es.Member(ctx, b.id)
		require.NoError(t, err)
		return rec != nil && rec.Load.Drained
	}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	state, err := flows.Invocation{File: wf, Cwd: f.work}.State()
	require.NoError(t, err)
	fl, err := b.api.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: flows.PipelineController, OwnerKey: "kept", Goal: "big output", State: state})
	require.NoError(t, err)
	// stepTask is the flow's nth task (step one's is the first), or nil.
	stepTask := func(n int) *stored.Task {
		ts, err := f.eng.FlowTasks(fl.ID)
		require.NoError(t, err)
		if len(ts) < n {
			return nil
		}
		return ts[n-1] // oldest first
	}
	polltest.Until(t, "gateway b's controller to queue step one", func() bool { return stepTask(1) != nil }, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))

	// b is paused while a runs step one, so that b's controller reads the
	// step's result only after its log is gone.
	b.signal(t, syscall.SIGSTOP)
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			b.signal(t, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	a := f.join("a")
	var one *stored.Task
	polltest.Until(t, "gateway a to run step one", func() bool {
		one = stepTask(1)
		return one != nil && one.Status.Terminal()
	}, polltest.Within(time.Minute), polltest.Every(50*time.Millisecond))
	require.Equal(t, sdk.TaskSucceeded, one.Status, "step one: %+v", one)
	require.Equal(t, a.id, one.Gateway, "step one ran on gateway a")
	require.EqualValues(t, printed, one.Result.StdoutBytes)
	require.NotEmpty(t, one.Result.StdoutPath, "step one's stdout is over the inline bound, so its record names the log")
	require.NoError(t, os.Remove(one.Result.StdoutPath))
	resume()

	flowIn := func(what string, ok func(*sdk.Flow) bool) *sdk.Flow {
		t.Helper()
		var cur *sdk.Flow
		polltest.Until(t, what, func() bool {
			cur, err = f.eng.GetFlow(fl.ID)
			require.NoError(t, err)
			return ok(cur) || cur.Status.Terminal()
		}, polltest.Within(time.Minute), polltest.Every(50*time.Millisecond))
		js, _ := json.Marshal(cur)
		require.True(t, ok(cur), "%s; the flow is %s", what, js)
		return cur
	}
	parked := flowIn("the flow to park at its gate, with step one's output read by gateway b", func(cur *sdk.Flow) bool {
		return cur.Status == sdk.FlowWaiting
	})
	var st struct {
		Results map[string]json.RawMessage `json:"results"`
	}
	require.NoError(t, json.Unmarshal(parked.State, &st))
	require.Contains(t, string(st.Results["rows"]), `{"spilled":`, "step rows' result is kept aside, not in the state")

	// b stops: its stream goes to a or c, whichever claims it, and
	// neither has step one's log.
	c := f.join("c")
	b.stop(t)
	yes := true
	_, err = c.api.DecideGate(ctx, apitype.GateDecision{Flow: fl.ID, Kind: sdk.GateApproval, Expected: &parked.Revision,
		Decision: sdk.Decision{Approved: &yes, By: "test"}})
	require.NoError(t, err)
	flowIn("the flow to succeed, its last steps reading step one's output and step rows' result on another gateway", func(cur *sdk.Flow) bool {
		return cur.Status == sdk.FlowSucceeded
	})
	require.Equal(t, "6000", strings.TrimSpace(stepTask(3).Result.Stdout), "step two counts the bytes step one printed")
	require.Equal(t, "3004", strings.TrimSpace(stepTask(4).Result.Stdout), "step three counts the bytes step rows printed")
}

// TestLargeOutputIsReadThroughAnyGateway: a pipeline whose output is over
// sdk.InlineStdout finishes on gateway a, which holds its event stream,
// and `flowgate pipeline resume` through gateway b, a machine of its own,
// prints the whole output: it is kept in the store, not in a's data
// directory.
func TestLargeOutputIsReadThroughAnyGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real gateway processes on an embedded etcd")
	}
	f := newFleet(t, 30*time.Second)
	wf := filepath.Join(f.work, "out.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: out
steps:
  - id: gate
    approval: Go on?
  - id: big
    run: head -c 6000 /dev/zero | tr '\0' x
`), 0o600))
	ctx := context.Background()
	a := f.join("a") // alone: it claims the flow's stream and keeps it
	state, err := flows.Invocation{File: wf, Cwd: f.work}.State()
	require.NoError(t, err)
	fl, err := a.api.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: flows.PipelineController, OwnerKey: "out", Goal: "large output", State: state})
	require.NoError(t, err)
	polltest.Until(t, "the flow to park at its gate", func() bool {
		cur, err := f.eng.GetFlow(fl.ID)
		require.NoError(t, err)
		return cur.Status == sdk.FlowWaiting
	}, polltest.Within(time.Minute), polltest.Every(50*time.Millisecond))
	holders, err := f.eng.StreamHolders()
	require.NoError(t, err)
	require.Equal(t, a.id, holders[fl.ID], "gateway a holds the flow's stream, and keeps it while the flow goes on")

	b := f.join("b")
	out := flowgate(t, f.bin, "--home", b.home, "pipeline", "resume", "--id", fl.ID, "--approve", "yes")
	require.Contains(t, out, strings.Repeat("x", 6000), "the whole output, read through gateway b")

	done, err := f.eng.GetFlow(fl.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowSucceeded, done.Status)
	require.NotNil(t, done.Output)
	file := done.Output.File
	require.NotNil(t, file, "the output is over the inline bound: %+v", done.Output)
	require.True(t, file.Kept, "the output is kept in the store")
	require.Empty(t, file.Path, "and is no file of gateway a's data directory")
}

// TestStateValuesAreSharedByTheGateways: a state.set of a pipeline run on
// gateway a is what state.get and diff.last of pipelines run on gateway
// b, a machine with a home of its own, read: the value is kept in the
// store, not under a's home.
func TestStateValuesAreSharedByTheGateways(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real gateway processes on an embedded etcd")
	}
	f := newFleet(t, 30*time.Second)
	a := f.join("a") // alone: the flow runs on a
	out := flowgate(t, f.bin, "--home", a.home, "pipeline", "run", `exec --json --shell "echo '{\"v\":1}'" | state.set seen`)
	require.Contains(t, out, `"v": 1`, "state.set outputs the value it stored")
	a.stop(t)

	b := f.join("b") // alone now: these flows run on b
	out = flowgate(t, f.bin, "--home", b.home, "pipeline", "run", `state.get seen`)
	require.Contains(t, out, `"v": 1`, "state.get on b reads what state.set stored on a")
	out = flowgate(t, f.bin, "--home", b.home, "pipeline", "run", `exec --json --shell "echo '{\"v\":2}'" | diff.last --key seen`)
	var diff []struct {
		Changed bool           `json:"changed"`
		Before  map[string]any `json:"before"`
	}
	// out is stderr's step lines, then the output.
	require.Contains(t, out, "[", "diff.last outputs an array")
	require.NoError(t, json.Unmarshal([]byte(out[strings.Index(out, "["):]), &diff), "%s", out)
	require.Len(t, diff, 1)
	require.True(t, diff[0].Changed)
	require.Equal(t, map[string]any{"v": 1.0}, diff[0].Before, "diff.last on b compares with what a stored")
	for _, home := range []string{a.home, b.home} {
		require.NoDirExists(t, filepath.Join(home, "pipeline-state"), "no value is kept under a home")
	}
}
