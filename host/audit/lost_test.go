package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/sdk"
)

// A lost task is an audit error only once maintenance can clear it: the
// audit and maintenance judge by the one retention the engine stamped
// (cleanup_after), not by a shorter one of the audit's own.
func TestLostIsAnErrorOnlyWhenMaintenanceCanClearIt(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	task := fx.finished(t, sdk.TaskLost)
	require.Equal(t, task.EndedAt.Add(7*24*time.Hour), task.CleanupAfter, "the engine's task retention")

	lost := func() audit.Finding {
		t.Helper()
		r := fx.audit(t, audit.Input{})
		require.Len(t, r.Findings, 1, "%+v", r.Findings)
		require.Equal(t, audit.Lost, r.Findings[0].Code)
		return r.Findings[0]
	}
	pruned := func() int {
		t.Helper()
		sum, err := maintenance.Run(context.Background(), fx.eng, maintenance.Config{Now: fx.clk.Now})
		require.NoError(t, err)
		return sum.TaskFlows.Pruned
	}

	fx.clk.Advance(2 * 24 * time.Hour)
	f := lost()
	require.Equal(t, audit.Warn, f.Severity, "two days after it ended the lost task is retained: %s", f.Detail)
	require.Zero(t, pruned(), "and maintenance keeps it")

	fx.clk.Advance(task.CleanupAfter.Sub(fx.clk.Now()))
	f = lost()
	require.Equal(t, audit.Error, f.Severity, "past its cleanup_after: %s", f.Detail)
	require.Equal(t, 1, pruned(), "the error is one maintenance clears: the lost task's flow is due for pruning")
}
