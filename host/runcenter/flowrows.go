package runcenter

import (
	"strings"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/trigger"
)

// flowRow is one row of the flow list: a flow under its readable name,
// or, folded, the newest run of a cron job on the page with the others
// under it.
type flowRow struct {
	apitype.FlowView
	// Name is what people call the flow: its goal, which is the
	// pipeline's, cron job's or task's name ("trigger NAME" for a
	// trigger's); the id is shown beside it, small.
	Name string
	// Job is the id of the cron job that started the flow; Trigger the
	// name of the trigger that did; both "" for other flows.
	Job, Trigger string
	// Runs are the job's other runs on the page, newest first, when
	// folded.
	Runs []apitype.FlowView
}

// Count is how many of the job's runs the row stands for.
func (r flowRow) Count() int { return 1 + len(r.Runs) }

// rowsOf makes the rows of flows, in their order; with fold, the runs
// of one cron job join the row of its newest run on the page.
func rowsOf(flows []apitype.FlowView, fold bool) []flowRow {
	cronPrefix, triggerPrefix := scheduler.JobOwnerKey(""), trigger.OwnerKey("")
	rows := make([]flowRow, 0, len(flows))
	byJob := map[string]int{}
	for _, v := range flows {
		row := flowRow{FlowView: v, Name: v.Goal}
		if job, ok := strings.CutPrefix(v.OwnerKey, cronPrefix); ok {
			row.Job = job
		} else if name, ok := strings.CutPrefix(v.OwnerKey, triggerPrefix); ok {
			row.Trigger = name
		}
		if i, seen := byJob[row.Job]; fold && row.Job != "" && seen {
			rows[i].Runs = append(rows[i].Runs, v)
			continue
		}
		if row.Job != "" {
			byJob[row.Job] = len(rows)
		}
		rows = append(rows, row)
	}
	return rows
}
