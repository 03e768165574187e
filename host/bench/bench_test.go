package bench_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/bench"
	"github.com/flowgate/flowgate/plugins/pipeline"
)

// tiny is a workload small enough for go test.
var tiny = bench.Sizes{
	Rounds: 1, Probe: 20 * time.Millisecond, Updates: 50 * time.Millisecond, Writers: 4,
	DispatchTasks: 2, Concurrency: 2, ControllerCalls: 2, Flows: 200, ListCalls: 1, RunningTasks: 4,
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  bench.Config
		want string
	}{
		{"no dir", bench.Config{}, "Dir is required"},
		{"few flows", bench.Config{Dir: "d", Sizes: bench.Sizes{Flows: 10}}, "Sizes.Flows must be at least 100"},
		{"negative count", bench.Config{Dir: "d", Sizes: bench.Sizes{Rounds: -1}}, "at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.WithDefaults().Validate()
			require.ErrorContains(t, err, tc.want)
		})
	}
	require.NoError(t, bench.Config{Dir: "d", Controller: pipeline.New()}.WithDefaults().Validate())
	require.Equal(t, bench.QuickSizes(), bench.Config{Dir: "d", Quick: true}.WithDefaults().Sizes)
	require.Equal(t, bench.FullSizes(), bench.Config{Dir: "d"}.WithDefaults().Sizes)
}

func TestTargetString(t *testing.T) {
	t.Parallel()
	require.Equal(t, "≥ 0.3×", bench.Target{Of: "ratio", Op: ">=", Limit: 0.3}.String())
	require.Equal(t, "≤ 10×", bench.Target{Of: "ratio", Op: "<=", Limit: 10}.String())
	require.Equal(t, "< 50", bench.Target{Of: "value", Op: "<", Limit: 50}.String())
	require.Equal(t, "100,000", bench.Format(100000))
	require.Equal(t, "0.0438", bench.Format(0.04381))
}

// TestCancelCleansUp cancels a run while its sleepers run, as Ctrl-C
// does, and checks that the run stops with the context's error, that no
// shim of the run is left and that the scratch directory is gone.
func TestCancelCleansUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	done := make(chan struct{})
	defer close(done)
	var progress syncBuffer
	wg.Go(func() { // cancel once the sleepers run, as the progress says
		for {
			if strings.Contains(progress.String(), "sleepers run\n") {
				cancel()
				return
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	_, err := bench.Run(ctx, bench.Config{Dir: dir, Sizes: tiny, Progress: &progress, Controller: pipeline.New(), SkipLobster: true})
	require.ErrorIs(t, err, context.Canceled)
	require.Contains(t, progress.String(), "cancelling", "the run was cancelled with sleepers running")
	require.Eventually(t, func() bool { return shims(dir) == 0 }, 10*time.Second, 20*time.Millisecond, "every shim has exited")
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "the scratch directory is removed")
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
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

// shims counts the processes whose command line names a path under dir
// after a "shim" argument, in the home of the restart phase: the shims of
// the sleepers of a run in dir (not those of the dispatch rounds, whose
// homes are elsewhere and which may linger a moment under load).
func shims(dir string) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	n := 0
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		for i := 0; i+1 < len(args); i++ {
			if rest, ok := strings.CutPrefix(args[i+1], dir); args[i] == "shim" && ok && strings.Contains(rest, "/home/") {
				n++
				break
			}
		}
	}
	return n
}
