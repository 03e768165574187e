package api

import (
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/store"
)

// The seam between the store's, the engine's index check's and the
// maintenance pass's reports and the API's words for them (backup, check,
// salvage and maintenance answers). toapi_store_test.go checks the shapes
// and that every field is copied.

func indexProblemOf(p engine.IndexProblem) apitype.IndexProblem {
	return apitype.IndexProblem(p)
}

func salvageReportOf(r store.SalvageReport) apitype.SalvageReport {
	out := apitype.SalvageReport{Source: r.Source, Path: r.Path, Copied: r.Copied, Scanned: r.Scanned,
		ScannedPages: r.ScannedPages, Duplicates: r.Duplicates, Rejected: r.Rejected, LostByKind: r.LostByKind,
		Problems: r.Problems}
	if r.Lost != nil {
		out.Lost = make([]apitype.SalvageLoss, len(r.Lost))
		for i, l := range r.Lost {
			out.Lost[i] = apitype.SalvageLoss(l)
		}
	}
	return out
}

func maintenanceSummaryOf(s maintenance.Summary) apitype.MaintenanceSummary {
	out := apitype.MaintenanceSummary{Mode: s.Mode, Tasks: apitype.MaintenanceTaskCounts(s.Tasks),
		TaskFlows: apitype.MaintenanceFlowCounts(s.TaskFlows), Quarantined: s.Quarantined, Indexes: s.Indexes,
		LogsRemoved: s.LogsRemoved, Skipped: s.Skipped, Errors: s.Errors}
	if c := s.Compaction; c != nil {
		out.Compaction = &apitype.Compaction{Space: apitype.Space(c.Space), Due: c.Due, Requested: c.Requested}
	}
	return out
}
