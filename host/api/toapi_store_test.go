package api

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// The backup, check, salvage and maintenance words keep the shapes of the
// store's, the index check's and the maintenance pass's reports they
// stand for. A field added to maintenance.Summary (or any type below)
// fails here until its apitype twin has it too.
func TestStoreReportsHaveTheirShapes(t *testing.T) {
	t.Parallel()
	pairs := []struct{ from, api any }{
		{engine.IndexProblem{}, apitype.IndexProblem{}},
		{store.SalvageReport{}, apitype.SalvageReport{}},
		{store.SalvageLoss{}, apitype.SalvageLoss{}},
		{maintenance.Summary{}, apitype.MaintenanceSummary{}},
		{maintenance.TaskCounts{}, apitype.MaintenanceTaskCounts{}},
		{maintenance.FlowCounts{}, apitype.MaintenanceFlowCounts{}},
		{maintenance.Compaction{}, apitype.Compaction{}},
		{store.Space{}, apitype.Space{}},
	}
	for _, p := range pairs {
		ft, at := reflect.TypeOf(p.from), reflect.TypeOf(p.api)
		require.Equal(t, shapeOf(ft), shapeOf(at), "apitype.%s has the fields of %s", at.Name(), ft)
	}
}

// Each report converted at the seam encodes to the JSON of the report it
// came from, with every field set at every depth.
func TestStoreReportConversionsCopyEveryField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		from    any
		convert func(v any) any
	}{
		{"index problem", engine.IndexProblem{}, func(v any) any { return indexProblemOf(v.(engine.IndexProblem)) }},
		{"salvage report", store.SalvageReport{}, func(v any) any { return salvageReportOf(v.(store.SalvageReport)) }},
		{"maintenance summary", maintenance.Summary{}, func(v any) any { return maintenanceSummaryOf(v.(maintenance.Summary)) }},
	}
	for _, c := range cases {
		v := reflect.New(reflect.TypeOf(c.from)).Elem()
		fillAll(v)
		want, err := json.Marshal(v.Interface())
		require.NoError(t, err, c.name)
		got, err := json.Marshal(c.convert(v.Interface()))
		require.NoError(t, err, c.name)
		require.Equal(t, string(want), string(got), "%s: every field is copied", c.name)
	}
}

// The answers that embedded or held the engine's, store's and maintenance
// pass's types encode to the same bytes now that they hold apitype's:
// each is compared with the struct it was before, filled alike.
func TestStoreAnswersKeepTheirJSON(t *testing.T) {
	t.Parallel()
	type checkProblemBefore struct {
		engine.IndexProblem
		Repairable bool   `json:"repairable"`
		Repair     string `json:"repair"`
	}
	type salvageResultBefore struct {
		store.SalvageReport
		Missing []string `json:"missing_records"`
	}
	type maintenanceReportBefore struct {
		Mode        string                 `json:"mode"`
		Maintenance maintenance.Summary    `json:"maintenance"`
		Tasks       map[sdk.TaskStatus]int `json:"tasks"`
		AuditBefore apitype.AuditSummary   `json:"audit_before"`
		AuditAfter  apitype.AuditSummary   `json:"audit_after"`
	}
	var problem checkProblemBefore
	fillAll(reflect.ValueOf(&problem).Elem())
	var salvage salvageResultBefore
	fillAll(reflect.ValueOf(&salvage).Elem())
	var report maintenanceReportBefore
	fillAll(reflect.ValueOf(&report).Elem())
	cases := []struct {
		name          string
		before, after any
	}{
		{"check problem", problem, apitype.CheckProblem{IndexProblem: indexProblemOf(problem.IndexProblem),
			Repairable: problem.Repairable, Repair: problem.Repair}},
		{"salvage result", salvage, apitype.SalvageResult{SalvageReport: salvageReportOf(salvage.SalvageReport),
			Missing: salvage.Missing}},
		{"maintenance report", report, apitype.MaintenanceReport{Mode: report.Mode, Maintenance: maintenanceSummaryOf(report.Maintenance),
			Tasks: report.Tasks, AuditBefore: report.AuditBefore, AuditAfter: report.AuditAfter}},
	}
	for _, c := range cases {
		want, err := json.Marshal(c.before)
		require.NoError(t, err, c.name)
		got, err := json.Marshal(c.after)
		require.NoError(t, err, c.name)
		require.Equal(t, string(want), string(got), "%s: the same bytes", c.name)
	}
}

// The numbers and names apitype gives a command are the engine's and the
// store's: a command refuses what the gateway would.
func TestStoreWordsAnswerAsTheEngine(t *testing.T) {
	t.Parallel()
	require.Equal(t, engine.MaxAttempts, apitype.MaxAttempts)
	require.Equal(t, engine.MaxNotifyTo, apitype.MaxNotifyTo)
	require.Equal(t, engine.MaxNotifyTemplate, apitype.MaxNotifyTemplate)
	require.Equal(t, engine.MaxHistoryPage, apitype.MaxHistoryPage)
	require.Equal(t, engine.IndexMissing, apitype.IndexMissing)
	require.Equal(t, engine.IndexOrphan, apitype.IndexOrphan)
	require.Equal(t, engine.RecordDamaged, apitype.RecordDamaged)
	for _, s := range []store.Space{{}, {FileBytes: 0, FreeBytes: 5}, {FileBytes: 4096, FreeBytes: 1024}, {FileBytes: 3, FreeBytes: 3}} {
		require.Equal(t, s.FreeShare(), apitype.Space(s).FreeShare(), "free share of %+v", s)
	}
}
