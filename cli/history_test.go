package cli_test

import (
	"bytes"
	"encoding/json"
	"os/user"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/cli"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

func TestFlowHistoryPrintsOneAlignedLineAnEntry(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var id string
	seed(t, home, func(eng *engine.Engine) {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "ship\x1b[31m"})
		require.NoError(t, err)
		_, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"approval","step":"review","prompt":"Go?"}`)})
		require.NoError(t, err)
		_, err = eng.CancelFlow(f.ID, "")
		require.NoError(t, err)
		id = f.ID
	})
	code, out, errOut := run(t, home, "tasks", "flow", "history", id)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "History of flow "+id+": 3 entries, flow cancelled", lines[0])
	require.Len(t, lines, 4)
	require.Regexp(t, `^    1  \S+Z  flow\.created {11}created queued managed: ship\\x1b\[31m$`, lines[1], "control characters are made visible")
	require.Regexp(t, `^    2  \S+Z  gate\.opened {12}waits at approval gate review: Go\? \(queued → waiting\)$`, lines[2])
	require.Regexp(t, `^    3  \S+Z  cancel\.requested {7}cancel requested \(waiting → cancelled\)  \(by operator\)$`, lines[3])

	code, out, errOut = run(t, home, "tasks", "flow", "history", id, "--json")
	require.Equal(t, 0, code, errOut)
	var page engine.HistoryPage
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	require.Len(t, page.Entries, 3)
	require.Equal(t, int64(3), page.Next)
	require.Equal(t, sdk.FlowCancelled, page.Status)

	code, _, errOut = run(t, home, "tasks", "flow", "history", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `flow "nope" does not exist`)
}

// syncBuffer is a buffer one goroutine writes while another reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFlowHistoryFollowWithoutAGateway follows a flow with no gateway
// running: entries written meanwhile by another process's writes appear,
// and the command returns once the flow ends. It reads the store only
// for a moment at a time, so those writes are never locked out.
func TestFlowHistoryFollowWithoutAGateway(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var f *sdk.Flow
	seed(t, home, func(eng *engine.Engine) {
		var err error
		f, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
		require.NoError(t, err)
	})
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Main([]string{"--home", home, "tasks", "flow", "history", f.ID, "--follow", "--json"}, &out, &errb)
	}()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			require.True(t, time.Now().Before(deadline), "timed out waiting for %s; output so far: %s %s", what, out.String(), errb.String())
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("the first entry", func() bool { return strings.Contains(out.String(), `"flow.created"`) })
	seed(t, home, func(eng *engine.Engine) {
		_, err := eng.Finish(f.ID, f.Revision, engine.EndInput{})
		require.NoError(t, err)
	})
	select {
	case code := <-done:
		require.Equal(t, 0, code, errb.String())
	case <-time.After(time.Minute):
		t.Fatalf("--follow did not return once the flow ended: %s %s", out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2, "one JSON entry a line")
	var last engine.HistoryEntry
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &last))
	require.Equal(t, "queued → succeeded", last.Summary)
}

// TestFlowShowWatchRedrawsUntilTheFlowEnds watches a flow with its
// output not a terminal: each changed frame follows the last after a
// blank line, with the progress bar, the gate and the latest history.
func TestFlowShowWatchRedrawsUntilTheFlowEnds(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var f *sdk.Flow
	seed(t, home, func(eng *engine.Engine) {
		var err error
		f, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g", State: json.RawMessage(`{}`)})
		require.NoError(t, err)
		task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: "build", Status: sdk.TaskRunning})
		require.NoError(t, err)
		half := 0.5
		_, err = eng.RecordProgress(task.ID, engine.ProgressInput{To: 1, Progress: &sdk.Progress{Fraction: &half, Phase: "linking"}})
		require.NoError(t, err)
		f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"approval","step":"ship","prompt":"Ship it?"}`)})
		require.NoError(t, err)
	})
	w := startWatch(t, home, f.ID)
	out := &w.out
	first := out.String()
	require.Contains(t, first, "progress: [##########----------]  50% linking")
	require.Contains(t, first, "Gate: approval at step ship: Ship it?")
	require.Contains(t, first, "gate.opened")
	require.NotContains(t, first, "\x1b[", "no escape codes when stdout is not a terminal")

	seed(t, home, func(eng *engine.Engine) {
		yes := true
		g, err := eng.DecideGate(engine.GateDecision{Flow: f.ID, Kind: sdk.GateApproval, Decision: sdk.Decision{Approved: &yes, By: "ana"}})
		require.NoError(t, err)
		_, err = eng.Finish(f.ID, g.Revision, engine.EndInput{})
		require.NoError(t, err)
	})
	w.ended(t)
	frames := strings.Split(out.String(), "\n\nTaskFlow:")
	require.GreaterOrEqual(t, len(frames), 2, out.String())
	last := frames[len(frames)-1]
	require.Contains(t, last, "status:")
	require.Contains(t, last, "succeeded")
	require.Contains(t, last, "approved by ana")
	require.NotContains(t, last, "Gate:")

	code, _, errOut := run(t, home, "tasks", "flow", "show", f.ID, "--watch", "--json")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--watch draws the flow for people and takes no --json")
}

// tasks flow cancel --by names who cancelled in the flow's history; the
// OS user does when --by is left out.
func TestFlowCancelRecordsWhoAsked(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var ids []string
	seed(t, home, func(eng *engine.Engine) {
		for range 2 {
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
			require.NoError(t, err)
			ids = append(ids, f.ID)
		}
	})
	code, _, errOut := run(t, home, "tasks", "flow", "cancel", ids[0], "--by", "alice")
	require.Equal(t, 0, code, errOut)
	code, _, errOut = run(t, home, "tasks", "flow", "cancel", ids[1])
	require.Equal(t, 0, code, errOut)
	me, err := user.Current()
	require.NoError(t, err)
	for i, want := range []string{"alice", me.Username} {
		code, out, errOut := run(t, home, "tasks", "flow", "history", ids[i], "--json")
		require.Equal(t, 0, code, errOut)
		var page engine.HistoryPage
		require.NoError(t, json.Unmarshal([]byte(out), &page))
		last := page.Entries[len(page.Entries)-1]
		require.Equal(t, engine.HistoryCancelRequested, last.Kind)
		require.Equal(t, want, last.By)
	}
}
