package pipeline_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// labels lists the labels of flow id's tasks, oldest first.
func labels(h *sdktest.Harness, id string) []string {
	var out []string
	for _, task := range h.Tasks(id) {
		out = append(out, task.Label)
	}
	return out
}

func TestContinuationReusesStepsBeforeTheFailureAndRerunsTheRest(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		flag := filepath.Join(t.TempDir(), "fixed")
		f, _ := start(t, h, "continue.lobster", map[string]any{"flag": flag})
		for range 3 {
			c.runner.next(t, h, f.ID)
		}
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Equal(t, []string{"fetch", "parse", "enrich"}, labels(h, f.ID))

		require.NoError(t, os.WriteFile(flag, nil, 0o600))
		succ, created, err := h.Host().Continue(t.Context(), f.ID, sdk.ContinueRequest{ExpectedRevision: f.Revision, Reason: "the flag file was missing"})
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, []string{"fetch", "parse"}, succ.Continuation.Reuse)
		require.Equal(t, []string{"enrich", "report", "notify"}, succ.Continuation.Rerun)
		h.Drain(succ.ID)
		for range 3 {
			c.runner.next(t, h, succ.ID)
		}
		succ = h.Flow(succ.ID)
		require.Equal(t, sdk.FlowSucceeded, succ.Status, succ.BlockedSummary)
		require.Equal(t, []string{"enrich", "report", "notify"}, labels(h, succ.ID), "fetch and parse are reused, never rerun")
		st, _ := readState(t, succ)
		require.JSONEq(t, `["prior=none\n"]`, string(st.Output), "a step that never ran has no prior output")
		require.Contains(t, string(st.Results["report"]), "enriched", "report reran on the new enrich output")
		require.Contains(t, string(st.Results["fetch"]), "fetched", "the reused result stands")
	})
}

func TestRerunFromAStepGivesRerunStepsTheirPriorOutput(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		flag := filepath.Join(t.TempDir(), "fixed")
		require.NoError(t, os.WriteFile(flag, nil, 0o600))
		f, _ := start(t, h, "continue.lobster", map[string]any{"flag": flag})
		for range 5 {
			c.runner.next(t, h, f.ID)
		}
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)

		succ, _, err := h.Host().Continue(t.Context(), f.ID, sdk.ContinueRequest{ExpectedRevision: f.Revision, Reason: "redo the report", FromStep: "report"})
		require.NoError(t, err)
		require.Equal(t, []string{"report", "notify"}, succ.Continuation.Rerun)
		h.Drain(succ.ID)
		report := c.runner.next(t, h, succ.ID)
		require.Equal(t, "enriched\n", report.Spec.Env[pipeline.PriorOutputEnv])
		notify := c.runner.next(t, h, succ.ID)
		require.Equal(t, "prior=none\n", notify.Spec.Env[pipeline.PriorOutputEnv])
		succ = h.Flow(succ.ID)
		require.Equal(t, sdk.FlowSucceeded, succ.Status, succ.BlockedSummary)
		st, _ := readState(t, succ)
		require.JSONEq(t, `["prior=prior=none\n\n"]`, string(st.Output), "notify saw its prior output")
		require.Equal(t, []string{"report", "notify"}, labels(h, succ.ID))
	})
}

func TestRerunCompositeStepsGiveTheirTasksThePriorOutput(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "continue-composite.lobster", nil)
		for range 3 {
			task := c.runner.next(t, h, f.ID)
			require.NotContains(t, task.Spec.Env, pipeline.PriorOutputEnv, "a first run has no prior output")
		}
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)

		succ, _, err := h.Host().Continue(t.Context(), f.ID, sdk.ContinueRequest{ExpectedRevision: f.Revision, Reason: "redo everything", FromStep: "fan"})
		require.NoError(t, err)
		require.Equal(t, []string{"fan", "each", "nested"}, succ.Continuation.Rerun)
		h.Drain(succ.ID)
		prior := map[string]string{}
		for range 3 {
			task := c.runner.next(t, h, succ.ID)
			prior[task.Label] = task.Spec.Env[pipeline.PriorOutputEnv]
		}
		require.Equal(t, map[string]string{
			"fan/branch":   `{"branch":{"prior":"none"}}`,
			"each/show[0]": `[{"item":"x","index":0,"show":"show prior=none\n"}]`,
			"nested>inner": "inner prior=none\n",
		}, prior, "each rerun node's tasks get the stdout the node printed in the source run")
		require.Equal(t, sdk.FlowSucceeded, h.Flow(succ.ID).Status)
	})
}

// With a data directory, large results and prior outputs are kept in
// files the state names, and a continuation reads the results it reuses
// from its source flow's files: the reused fetch result reaches check
// whole, and each rerun step gets its prior output. On a shared store
// the same values are kept in the store through the Host and read from
// the source flow's there; and a step's stdout in a log file that is not
// on the continuation's machine is read from its task's record in the
// source flow.
func TestContinuationReadsKeptValuesOfItsSource(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		shared        bool
		logsElsewhere bool
	}{{"files", false, false}, {"store", true, false}, {"store, logs on another machine", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := &runner{}
			if tc.logsElsewhere {
				r.logs = t.TempDir()
			}
			c := &controller{Controller: pipeline.NewWithOptions(pipeline.Options{DataDir: dir, SharedStore: tc.shared}), runner: r}
			sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
				f, _ := start(t, h, "continue-big.lobster", nil)
				for range 7 {
					c.runner.next(t, h, f.ID)
				}
				f = h.Flow(f.ID)
				require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
				st, _ := readState(t, f)
				if !tc.shared {
					require.JSONEq(t, `{"spilled":"`+spilledSum(t, dir, f.ID, "fetch")+`"}`, string(st.Results["fetch"]))
				}
				require.JSONEq(t, `[20000]`, string(st.Output))
				for _, task := range h.Tasks(f.ID) {
					if tc.logsElsewhere && task.Result != nil && task.Result.StdoutPath != "" {
						require.NoError(t, os.Remove(task.Result.StdoutPath)) // on the machine that ran it
					}
				}

				succ, _, err := h.Host().Continue(t.Context(), f.ID, sdk.ContinueRequest{ExpectedRevision: f.Revision, Reason: "again", FromStep: "p1"})
				require.NoError(t, err)
				h.Drain(succ.ID)
				for i := range 5 {
					p := c.runner.next(t, h, succ.ID)
					require.Equal(t, strings.Repeat(strconv.Itoa(i+1), 16000)+"\n", p.Spec.Env[pipeline.PriorOutputEnv])
				}
				c.runner.next(t, h, succ.ID)
				succ = h.Flow(succ.ID)
				require.Equal(t, sdk.FlowSucceeded, succ.Status, succ.BlockedSummary)
				st, top := readState(t, succ)
				require.Contains(t, top, "prior_output_file", "80 KB of prior outputs are kept aside")
				require.NotContains(t, top, "prior_output")
				require.JSONEq(t, `[20000]`, string(st.Output), "the reused fetch result was read from the source flow's")
				if tc.shared {
					kept, err := filepath.Glob(filepath.Join(dir, "*", "*"))
					require.NoError(t, err)
					require.Empty(t, kept, "nothing is kept in the data directory on a shared store")
				}
			})
		})
	}
}

// spilledSum returns the digest of the one file under dir/flowID that
// holds the result of step id.
func spilledSum(t *testing.T, dir, flowID, id string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, flowID, "*.json"))
	require.NoError(t, err)
	for _, name := range names {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		if strings.HasPrefix(string(b), `{"id":"`+id+`"`) {
			return strings.TrimSuffix(filepath.Base(name), ".json")
		}
	}
	t.Fatalf("no file under %s holds the result of step %s", filepath.Join(dir, flowID), id)
	return ""
}
