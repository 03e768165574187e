package runner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// A task that reports {"blocked":…} and exits 0 ends blocked, and its
// mirrored flow is blocked on it with the reason; one that exits non-zero
// after the same report fails, as any failure does.
func TestBlockedReport(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	report := `echo '{"fraction":0.5,"phase":"login"}' >> "$FLOWGATE_PROGRESS"
echo '{"blocked":"  the token expired; renew it  "}' >> "$FLOWGATE_PROGRESS"
`
	blocked := h.wait(h.create(h.spec(report + "exit 0")).ID)
	require.Equal(t, sdk.TaskBlocked, blocked.Status, "errors: %q", blocked.Errors)
	require.Equal(t, "the token expired; renew it", blocked.Blocked)
	require.Equal(t, "blocked", blocked.Reason)
	require.NotNil(t, blocked.Progress, "a blocked line leaves the progress snapshot as it was")
	require.Equal(t, "login", blocked.Progress.Phase)
	f, err := h.eng().GetFlow(blocked.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowBlocked, f.Status)
	require.Equal(t, blocked.ID, f.BlockedTaskID)
	require.Equal(t, "the token expired; renew it", f.BlockedSummary)
	require.True(t, f.EndedAt.IsZero(), "a blocked flow has not ended")

	failed := h.wait(h.create(h.spec(report + "exit 3")).ID)
	require.Equal(t, sdk.TaskFailed, failed.Status)
	f, err = h.eng().GetFlow(failed.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowFailed, f.Status)
	require.Empty(t, f.BlockedTaskID)
}
