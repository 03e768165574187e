package progress_test

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk/progress"
)

func TestLinesAreWholeUnderConcurrency(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "progress.jsonl")
	r := progress.New(path)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				require.NoError(t, r.Report(float64(j)/50, "phase", "message"))
			}
		}()
	}
	wg.Wait()
	require.NoError(t, r.Milestone("done", "all of it"))

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	var last progress.Line
	for sc.Scan() {
		require.NoError(t, json.Unmarshal(sc.Bytes(), &last), "line %d", n)
		n++
	}
	require.Equal(t, 401, n)
	require.Equal(t, "done", last.Milestone)
}

func TestUnsetReportsNothing(t *testing.T) {
	var r *progress.Reporter
	require.NoError(t, r.Report(0.5, "x", "y"))
	require.NoError(t, progress.New("").Milestone("m", ""))
}

func ExampleReport() {
	// Inside a task run by flowgate, this appends to $FLOWGATE_PROGRESS;
	// elsewhere it does nothing.
	_ = progress.Report(0.6, "ingesting", "40k/80k rows")
	_ = progress.Milestone("sources-gathered", "4 sources")
	// Output:
}

func TestFractionOutsideUnitRangeIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "progress.jsonl")
	r := progress.New(path)
	for _, f := range []float64{-0.1, 1.5, math.Inf(1), math.NaN()} {
		err := r.Report(f, "p", "m")
		require.Error(t, err, "fraction %v", f)
		require.Contains(t, err.Error(), "outside [0,1]")
	}
	_, err := os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was written")
	require.NoError(t, r.Report(1, "done", ""))
}

func TestReportUsage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "progress.jsonl")
	r := progress.New(path)
	require.NoError(t, r.ReportUsage(120, 30, 0.05))
	require.ErrorContains(t, r.ReportUsage(-1, 0, 0), "must not be negative")
	require.ErrorContains(t, r.ReportUsage(0, 0, math.NaN()), "must not be negative")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.JSONEq(t, `{"usage":{"input_tokens":120,"output_tokens":30,"cost":0.05}}`, string(b))
}

func TestBlocked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "progress.jsonl")
	r := progress.New(path)
	require.ErrorContains(t, r.Blocked("  "), "needs a reason")
	_, err := os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "a refused report writes nothing")
	require.NoError(t, r.Blocked("the token expired; renew it"))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.JSONEq(t, `{"blocked":"the token expired; renew it"}`, string(b))
}
