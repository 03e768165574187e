package sdk_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

func TestLoggerLevel(t *testing.T) {
	t.Setenv(sdk.LogLevelEnv, "debug")
	require.True(t, sdk.Logger().IsDebug())
	t.Setenv(sdk.LogLevelEnv, "")
	require.True(t, sdk.Logger().IsInfo())
	require.False(t, sdk.Logger().IsDebug())
}

func TestWatchParent(t *testing.T) {
	t.Parallel()
	var calls, gone atomic.Int32
	getppid := func() int {
		if calls.Add(1) > 3 {
			return 1
		}
		return 42
	}
	done := make(chan struct{})
	go func() {
		sdk.WatchParent(context.Background(), 42, getppid, time.Millisecond, func() { gone.Add(1) })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("watchParent did not notice the parent change")
	}
	require.EqualValues(t, 1, gone.Load())
	require.EqualValues(t, 4, calls.Load())

	// A parent that stays: let the watchdog look several times, then stop it.
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	var looks atomic.Int32
	go func() {
		sdk.WatchParent(ctx, 42, func() int {
			if looks.Add(1) == 5 {
				cancel()
			}
			return 42
		}, time.Millisecond, func() { gone.Add(1) })
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("watchParent did not stop when its context ended")
	}
	require.GreaterOrEqual(t, looks.Load(), int32(5))
	require.EqualValues(t, 1, gone.Load(), "a live parent is never reported gone")
}
