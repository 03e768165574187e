package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/bench"
)

// tinyBench is a workload small enough for go test: every figure is
// measured, over a few records and processes.
var tinyBench = bench.Sizes{
	Rounds: 2, Probe: 20 * time.Millisecond, Updates: 50 * time.Millisecond, Writers: 4,
	DispatchTasks: 4, Concurrency: 2, ControllerCalls: 3, Flows: 200, ListCalls: 1, RunningTasks: 3,
}

// TestBenchJSON runs flowgate bench --quick --json over the tiny
// workload (this test binary serves the shims and the plugin, see
// TestMain) and checks the report's shape and arithmetic, never its
// timings, and that the scratch directory is gone.
func TestBenchJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	cmd := benchCmd(&env{stdout: &out, stderr: &errb}, tinyBench)
	cmd.SetArgs([]string{"--quick", "--json", "--no-lobster", "--dir", dir})
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	require.NoError(t, cmd.ExecuteContext(context.Background()), errb.String())
	require.Contains(t, errb.String(), "[1/11]")
	require.Contains(t, errb.String(), "[11/11] done")

	var rep struct {
		Dir     string          `json:"dir"`
		Quick   bool            `json:"quick"`
		Sizes   json.RawMessage `json:"sizes"`
		Machine struct {
			CPUs int    `json:"cpus"`
			Go   string `json:"go"`
			OS   string `json:"os"`
		} `json:"machine"`
		Started time.Time `json:"started_at"`
		Seconds float64   `json:"duration_seconds"`
		Figures []struct {
			Name          string    `json:"name"`
			Title         string    `json:"title"`
			Value         float64   `json:"value"`
			Unit          string    `json:"unit"`
			Rounds        []float64 `json:"rounds"`
			Baseline      float64   `json:"baseline"`
			BaselineTitle string    `json:"baseline_title"`
			BaselineUnit  string    `json:"baseline_unit"`
			Ratio         float64   `json:"ratio"`
			Target        *struct {
				Of    string  `json:"of"`
				Op    string  `json:"op"`
				Limit float64 `json:"limit"`
			} `json:"target"`
			Met  *bool  `json:"met"`
			Note string `json:"note"`
		} `json:"figures"`
		Skipped []string `json:"skipped"`
		Verdict struct {
			Met    int      `json:"met"`
			Total  int      `json:"total"`
			Missed []string `json:"missed"`
			Line   string   `json:"line"`
		} `json:"verdict"`
	}
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&rep))
	require.Equal(t, dir, rep.Dir)
	require.True(t, rep.Quick)
	require.Positive(t, rep.Machine.CPUs)
	require.Positive(t, rep.Seconds)
	require.False(t, rep.Started.IsZero())

	var names []string
	met, targets := 0, 0
	for _, f := range rep.Figures {
		names = append(names, f.Name)
		require.NotEmpty(t, f.Title)
		require.NotEmpty(t, f.Unit)
		require.Positive(t, f.Value, f.Name)
		require.Len(t, f.Rounds, tinyBench.Rounds, f.Name)
		for _, v := range f.Rounds {
			require.Positive(t, v, f.Name)
		}
		if f.Name == bench.FigRestart {
			require.Contains(t, f.Note, "the CPU this process spent in the start", "the restart's wall time is read beside its CPU")
		}
		if f.Name == bench.FigStoreWriter {
			require.LessOrEqual(t, f.Value, 1.0, "a share of the rounds' time")
			require.Contains(t, f.Note, "bbolt's commit")
		}
		if f.Name == bench.FigFsync || f.Name == bench.FigTaskFiles || f.Name == bench.FigStoreWriter { // facts beside the figures
			require.Zero(t, f.Baseline)
			require.Zero(t, f.Ratio)
		} else {
			require.Positive(t, f.Baseline, f.Name)
			require.NotEmpty(t, f.BaselineTitle, f.Name)
			require.InEpsilon(t, f.Value/f.Baseline, f.Ratio, 1e-9, f.Name)
		}
		if f.Target == nil {
			require.Nil(t, f.Met, f.Name)
			continue
		}
		targets++
		require.NotNil(t, f.Met, f.Name)
		v := f.Value
		if f.Target.Of == "ratio" {
			v = f.Ratio
		}
		want := map[string]bool{">=": v >= f.Target.Limit, "<=": v <= f.Target.Limit, "<": v < f.Target.Limit}[f.Target.Op]
		require.Equal(t, want, *f.Met, f.Name)
		if *f.Met {
			met++
		}
	}
	require.Equal(t, []string{bench.FigFsync, bench.FigUpdate1, bench.FigUpdateN, bench.FigDispatch, bench.FigTaskFiles, bench.FigStoreWriter, bench.FigTaskCPU, bench.FigRunning,
		bench.FigStartLatency, bench.FigTriggerAccept, bench.FigTriggerLatency, bench.FigTasksRun, bench.FigStartStop, bench.FigController,
		bench.FigControllerRead, bench.FigList, bench.FigListAll, bench.FigRunCenterList, bench.FigRestart, bench.FigRSS}, names)
	require.Len(t, rep.Skipped, 5, "the figures against Lobster and the step floor beside them, left out")
	require.Equal(t, targets, rep.Verdict.Total)
	require.Equal(t, met, rep.Verdict.Met)
	require.Len(t, rep.Verdict.Missed, targets-met)
	require.NotEmpty(t, rep.Verdict.Line)

	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "the scratch directory is removed")
}

// TestBenchText checks the table's columns and the verdict line of a
// report, without running one.
func TestBenchText(t *testing.T) {
	t.Parallel()
	met, missed := true, false
	rep := bench.Report{Dir: "/h", Figures: []bench.Figure{
		{Name: bench.FigFsync, Title: "raw fsync", Value: 10000, Unit: "fsync/s"},
		{Name: bench.FigUpdate1, Title: "guarded flow update, 1 writer", Value: 4000, Unit: "updates/s", Baseline: 10000,
			BaselineTitle: "raw fsync", BaselineUnit: "fsync/s", Ratio: 0.4, Target: &bench.Target{Of: "ratio", Op: ">=", Limit: 0.3}, Met: &met},
		{Name: bench.FigListAll, Title: "tasks flow list", Value: 60, Unit: "ms", Baseline: 1, BaselineTitle: "small", BaselineUnit: "ms",
			Ratio: 60, Target: &bench.Target{Of: "value", Op: "<", Limit: 50}, Met: &missed, Note: "every flow"},
	}, Verdict: bench.Verdict{Met: 1, Total: 2, Line: "FAIL: 1 of 2 targets met"}}
	var b bytes.Buffer
	writeBench(&b, rep)
	for _, want := range []string{
		"Figure", "Baseline", "Ratio", "Target", "Verdict",
		"4,000 updates/s", "10,000 fsync/s (raw fsync)", "0.4×", "≥ 0.3×", "met",
		"tasks flow list [3]", "< 50 ms", "NOT MET", "[3] every flow",
		"verdict: FAIL: 1 of 2 targets met",
	} {
		require.Contains(t, b.String(), want)
	}
}
