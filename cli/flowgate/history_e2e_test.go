package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// TestHistoryIsCompleteAcrossGatewaySIGKILL runs a pipeline whose first
// step reports progress and milestones, SIGKILLs the real gateway while
// the step runs and again while the flow waits at its gate, approves the
// gate, and then reads the flow's history through the CLI: every flow
// revision is there exactly once and in order, every task's lifecycle and
// milestones exactly once, the gate opened once and answered once by its
// approver, and the seqs count without a gap.
func TestHistoryIsCompleteAcrossGatewaySIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	started := filepath.Join(work, "started")
	wf := filepath.Join(work, "history.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: history
steps:
  - id: one
    run: |
      p=$FLOWGATE_PROGRESS
      echo '{"fraction":0.25,"phase":"a"}' >>$p
      echo '{"milestone":"first"}' >>$p
      touch `+started+`
      while [ ! -e `+started+`.go ]; do sleep 0.05; done
      echo '{"milestone":"second"}' >>$p
      echo '{"fraction":1,"phase":"done"}' >>$p
  - id: gate
    approval: Go on?
  - id: two
    run: echo two
`), 0o600))

	g := startGateway(t, bin, home, logf)
	flowID := runDetached(t, bin, home, wf)
	view := func() apitype.FlowView { return viewFlow(t, home, flowID) }
	until := func(what string, cond func() bool) {
		polltest.Until(t, "", func() (bool, string) { return cond(), "waiting for " + what }, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	}
	until("step one to start", func() bool { _, err := os.Stat(started); return err == nil })
	g.kill(t) // mid-step, its first milestone maybe not yet recorded
	require.NoError(t, os.WriteFile(started+".go", nil, 0o600))
	g = startGateway(t, bin, home, logf)
	until("the gate", func() bool { return view().Status == sdk.FlowWaiting })
	g.kill(t) // while waiting
	g = startGateway(t, bin, home, logf)
	defer g.kill(t)

	flowgate(t, bin, "--home", home, "tasks", "flow", "approve", flowID, "--by", "tester")
	until("the flow to end", func() bool { return view().Status.Terminal() })
	v := view()
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)

	page := flowHistory(t, bin, home, flowID)
	checkComplete(t, v, page)

	// Following an ended flow prints the same entries and returns.
	out, err := exec.Command(bin, "--home", home, "tasks", "flow", "history", flowID, "--follow").Output()
	require.NoError(t, err)
	require.Equal(t, len(page.Entries)+1, strings.Count(string(out), "\n"), "%s", out)
	require.Contains(t, string(out), "approval gate gate approved by tester")
}

// checkComplete checks that page is the complete history of flow v.
func checkComplete(t *testing.T, v apitype.FlowView, page engine.HistoryPage) {
	t.Helper()
	require.Zero(t, page.Dropped)
	var revisions []int64
	count := map[string]int{}
	for i, e := range page.Entries {
		require.Equal(t, int64(i+1), e.Seq, "seqs count without a gap")
		if i > 0 {
			require.False(t, e.At.Before(page.Entries[i-1].At), "entries are in commit order")
		}
		count[string(e.Kind)+" "+e.TaskID]++
		var data struct {
			Revision  *int64         `json:"revision"`
			Milestone *sdk.Milestone `json:"milestone"`
		}
		if len(e.Data) > 0 {
			require.NoError(t, json.Unmarshal(e.Data, &data))
		}
		if e.TaskID == "" && data.Revision != nil {
			revisions = append(revisions, *data.Revision)
		}
		if data.Milestone != nil {
			count["milestone "+e.TaskID+" "+data.Milestone.Name]++
		}
	}
	var want []int64
	for r := int64(1); r <= v.Revision; r++ {
		want = append(want, r)
	}
	require.Equal(t, want, revisions, "every flow revision has exactly one entry, in order")
	require.Len(t, v.Tasks, 2)
	for _, task := range v.Tasks {
		require.Equal(t, 1, count["task.created "+task.ID], task.Label)
		require.Equal(t, task.Attempts, count["task.started "+task.ID], task.Label)
		require.Equal(t, 1, count["task.finished "+task.ID], task.Label)
		for _, m := range task.Milestones {
			require.Equal(t, 1, count["milestone "+task.ID+" "+m.Name], "milestone %s of %s", m.Name, task.Label)
		}
	}
	require.Equal(t, 1, count["flow.created "], "%v", count)
	require.Equal(t, 1, count["gate.opened "], "%v", count)
	require.Equal(t, 1, count["gate.answered "], "%v", count)
	var answered engine.HistoryEntry
	for _, e := range page.Entries {
		if e.Kind == engine.HistoryGateAnswered {
			answered = e
		}
	}
	require.Equal(t, "tester", answered.By)
	last := page.Entries[len(page.Entries)-1]
	require.Equal(t, engine.HistoryStatus, last.Kind)
	require.True(t, strings.HasSuffix(last.Summary, "→ succeeded"), last.Summary)
}
