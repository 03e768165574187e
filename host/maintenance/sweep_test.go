package maintenance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/sdk"
)

func TestSweeperPrunesExpiredFlowsPeriodically(t *testing.T) {
	e := newEnv(t)
	old := e.task(sdk.TaskSucceeded)
	clock := func() time.Time { return t0.Add(8 * 24 * time.Hour) }
	s := maintenance.NewSweeper(e.eng, maintenance.SweepConfig{
		First: time.Millisecond, Interval: 5 * time.Millisecond,
		Pass: maintenance.Config{Home: e.home, Now: clock},
	})
	s.Start(context.Background())
	require.Eventually(t, func() bool { _, n := s.Last(); return n >= 2 }, 10*time.Second, 5*time.Millisecond, "two passes")
	require.NoError(t, s.Stop(context.Background()))
	require.NoError(t, s.Stop(context.Background()), "a second Stop does nothing")

	_, err := e.eng.GetFlow(old.FlowID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	last, _ := s.Last()
	require.Equal(t, "apply", last.Mode)

}
