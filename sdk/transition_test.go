package sdk_test

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// diagramEdges reads the mermaid block under a "## heading" of the state
// machine doc and returns its moves as "from->to", leaving out [*].
func diagramEdges(t *testing.T, doc, heading string) []string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## "+heading+"\n")
	require.True(t, ok, "docs/state-machine.md has no section %q", heading)
	_, block, ok := strings.Cut(section, "```mermaid\n")
	require.True(t, ok, "section %q has no mermaid block", heading)
	block, _, _ = strings.Cut(block, "```")
	edge := regexp.MustCompile(`^\s*(\S+)\s*-->\s*(\S+)\s*$`)
	var out []string
	for _, line := range strings.Split(block, "\n") {
		m := edge.FindStringSubmatch(line)
		if m == nil || m[1] == "[*]" || m[2] == "[*]" {
			continue
		}
		out = append(out, m[1]+"->"+m[2])
	}
	sort.Strings(out)
	return out
}

func TestStateMachineDocMatchesCode(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/state-machine.md")
	require.NoError(t, err)
	doc := string(b)

	var flows []string
	for _, from := range sdk.FlowStatuses() {
		for _, to := range sdk.FlowMoves(from) {
			flows = append(flows, string(from)+"->"+string(to))
		}
		require.Equal(t, from.Terminal(), len(sdk.FlowMoves(from)) == 0, "terminal flow status %s has no moves", from)
	}
	sort.Strings(flows)
	require.Equal(t, flows, diagramEdges(t, doc, "Flow"))

	var tasks []string
	for _, from := range sdk.TaskStatuses() {
		for _, to := range sdk.TaskMoves(from) {
			tasks = append(tasks, string(from)+"->"+string(to))
		}
		require.Equal(t, from.Terminal(), len(sdk.TaskMoves(from)) == 0, "terminal task status %s has no moves", from)
	}
	sort.Strings(tasks)
	require.Equal(t, tasks, diagramEdges(t, doc, "Task"))

	var retries []string
	for _, from := range sdk.FlowRetryFrom() {
		retries = append(retries, string(from)+"->"+string(sdk.FlowQueued))
	}
	sort.Strings(retries)
	require.Equal(t, retries, diagramEdges(t, doc, "Retry of a single run"))
}

func TestCheckFlowRetry(t *testing.T) {
	t.Parallel()
	mirrored := func(s sdk.FlowStatus) *sdk.Flow {
		return &sdk.Flow{ID: "f", SyncMode: sdk.SyncTaskMirrored, Status: s}
	}
	for _, s := range []sdk.FlowStatus{sdk.FlowBlocked, sdk.FlowFailed, sdk.FlowCancelled, sdk.FlowLost} {
		require.NoError(t, sdk.CheckFlowRetry(mirrored(s)), s)
	}
	for s, want := range map[sdk.FlowStatus]error{
		sdk.FlowQueued: sdk.ErrIllegalTransition, sdk.FlowRunning: sdk.ErrIllegalTransition, sdk.FlowSucceeded: sdk.ErrTerminal,
	} {
		err := sdk.CheckFlowRetry(mirrored(s))
		require.ErrorIs(t, err, want, s)
		require.ErrorContains(t, err, "is "+string(s), s)
	}
	err := sdk.CheckFlowRetry(&sdk.Flow{ID: "m", SyncMode: sdk.SyncManaged, ControllerID: "pipeline", Status: sdk.FlowFailed})
	require.ErrorIs(t, err, sdk.ErrIllegalTransition)
	require.ErrorContains(t, err, "flowgate tasks flow continue m")
}

func TestCheckMoves(t *testing.T) {
	t.Parallel()
	cancelling := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		flow sdk.Flow
		to   sdk.FlowStatus
		want error
	}{
		{"stay waiting", sdk.Flow{Status: sdk.FlowWaiting}, sdk.FlowWaiting, nil},
		{"resume", sdk.Flow{Status: sdk.FlowWaiting}, sdk.FlowRunning, nil},
		{"reopen", sdk.Flow{Status: sdk.FlowSucceeded}, sdk.FlowSucceeded, sdk.ErrTerminal},
		{"unknown status", sdk.Flow{Status: sdk.FlowQueued}, "paused", sdk.ErrIllegalTransition},
		{"resume under cancel", sdk.Flow{Status: sdk.FlowWaiting, CancelRequestedAt: cancelling}, sdk.FlowRunning, sdk.ErrCancelRequested},
		{"stay under cancel", sdk.Flow{Status: sdk.FlowRunning, CancelRequestedAt: cancelling}, sdk.FlowRunning, nil},
		{"fail under cancel", sdk.Flow{Status: sdk.FlowRunning, CancelRequestedAt: cancelling}, sdk.FlowFailed, nil},
	} {
		err := sdk.CheckFlowMove(&tc.flow, tc.to)
		if tc.want == nil {
			require.NoError(t, err, tc.name)
			require.True(t, sdk.CanMoveFlow(tc.flow.Status, tc.to), tc.name)
			continue
		}
		require.ErrorIs(t, err, tc.want, tc.name)
	}
	require.NoError(t, sdk.CheckTaskMove(&sdk.Task{Status: sdk.TaskRunning}, sdk.TaskSucceeded))
	require.ErrorIs(t, sdk.CheckTaskMove(&sdk.Task{Status: sdk.TaskQueued}, sdk.TaskSucceeded), sdk.ErrIllegalTransition)
	require.ErrorIs(t, sdk.CheckTaskMove(&sdk.Task{Status: sdk.TaskCancelled}, sdk.TaskCancelled), sdk.ErrTerminal)
	require.False(t, sdk.CanMoveTask(sdk.TaskSucceeded, sdk.TaskSucceeded))
}
