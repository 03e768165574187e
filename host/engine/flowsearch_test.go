package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// clockedEngine is an engine whose clock the test moves: each flow it
// creates is made at the clock's time.
func clockedEngine(t *testing.T, start time.Time) (*engine.Engine, *time.Time) {
	t.Helper()
	now := start
	eng, err := engine.New(openStore(t), engine.Config{Now: func() time.Time { return now }})
	require.NoError(t, err)
	return eng, &now
}

func goals(p engine.FlowPage) []string {
	out := []string{}
	for _, f := range p.Flows {
		out = append(out, f.Goal)
	}
	return out
}

func TestListFlowsSearchesGoalOwnerAndLabelsIgnoringCase(t *testing.T) {
	t.Parallel()
	eng, _ := clockedEngine(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	for _, in := range []engine.CreateFlowInput{
		{OwnerKey: "cron:job-1", ControllerID: "ctl", Goal: "Nightly Backup"},
		{OwnerKey: "trigger:deploy-hook", ControllerID: "ctl", Goal: "trigger deploy-hook"},
		{OwnerKey: "me", ControllerID: "ctl", Goal: "report"},
	} {
		_, err := eng.CreateFlow(in)
		require.NoError(t, err)
	}
	labelled, _, err := eng.CreateControllerFlow("ctl", sdk.FlowRequest{OwnerKey: "me", Goal: "a file", IdempotencyKey: "k1", Labels: map[string]string{"source": "Inbox"}})
	require.NoError(t, err)
	require.Equal(t, "Inbox", labelled.Labels["source"])

	for _, tc := range []struct {
		search string
		want   []string
	}{
		{"backup", []string{"Nightly Backup"}},
		{"NIGHTLY", []string{"Nightly Backup"}},
		{"deploy", []string{"trigger deploy-hook"}},
		{"job-1", []string{"Nightly Backup"}},
		{"inbox", []string{"a file"}},
		{"source", []string{"a file"}},
		{"nothing like it", []string{}},
		{"", []string{"a file", "report", "trigger deploy-hook", "Nightly Backup"}},
	} {
		page, err := eng.ListFlows(engine.FlowFilter{Search: tc.search})
		require.NoError(t, err, tc.search)
		require.Equal(t, tc.want, goals(page), "search %q", tc.search)
	}
}

func TestListFlowsTimeRangeIncludesBothEnds(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	eng, now := clockedEngine(t, day)
	for i := range 5 {
		*now = day.Add(time.Duration(i) * 24 * time.Hour)
		_, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "me", ControllerID: "ctl", Goal: "day " + string(rune('1'+i))})
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		name         string
		since, until time.Time
		want         []string
	}{
		{"since", day.Add(72 * time.Hour), time.Time{}, []string{"day 5", "day 4"}},
		{"until", time.Time{}, day.Add(24 * time.Hour), []string{"day 2", "day 1"}},
		{"both", day.Add(24 * time.Hour), day.Add(72 * time.Hour), []string{"day 4", "day 3", "day 2"}},
		{"between flows", day.Add(time.Hour), day.Add(2 * time.Hour), []string{}},
	} {
		page, err := eng.ListFlows(engine.FlowFilter{Since: tc.since, Until: tc.until})
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, goals(page), tc.name)
	}
	// Until is a starting point that a cursor still pages from.
	page, err := eng.ListFlows(engine.FlowFilter{Until: day.Add(96 * time.Hour), Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"day 5", "day 4"}, goals(page))
	page, err = eng.ListFlows(engine.FlowFilter{Until: day.Add(96 * time.Hour), Limit: 2, After: page.Next})
	require.NoError(t, err)
	require.Equal(t, []string{"day 3", "day 2"}, goals(page))
}

func TestListFlowsRefusesABackwardRangeAndANegativeScan(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	_, err := eng.ListFlows(engine.FlowFilter{Since: day, Until: day.Add(-time.Hour)})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "give a since before the until")
	_, err = eng.ListFlows(engine.FlowFilter{Scan: -1})
	require.True(t, errors.Is(err, sdk.ErrInvalid), err)
}

// A search that matches few flows reads at most Scan flows a page: the
// page ends early with a cursor, and following the cursors finds every
// match exactly once.
func TestListFlowsScanBoundEndsAPageEarlyWithACursor(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	for i := range 25 {
		goal := "filler"
		if i%10 == 0 {
			goal = "needle"
		}
		_, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "me", ControllerID: "ctl", Goal: goal})
		require.NoError(t, err)
	}
	f := engine.FlowFilter{Search: "needle", Scan: 8, Limit: 50}
	var found, pages int
	for {
		page, err := eng.ListFlows(f)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Flows), 8)
		found += len(page.Flows)
		pages++
		if page.Next == "" {
			break
		}
		f.After = page.Next
	}
	require.Equal(t, 3, found)
	require.Equal(t, 4, pages, "25 flows at 8 a page")
}
