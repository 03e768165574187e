package api

import (
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
)

// The one seam between the engine's types and the API's words (package
// apitype). Each apitype type has its engine type's fields in the same
// order, so most of these are Go conversions: they stop compiling when
// the two shapes part, which is the reminder to change apitype too. Those
// that copy field by field (a flow view, whose chain differs, and the
// history, whose kind does) are checked by toapi_shape_test.go, and the
// JSON of both sides is compared by toapi_internal_test.go. The cron
// words have the same kind of seam in toapi_cron.go, the trigger,
// plugin, audit and write-health words in toapi_other.go, and the
// backup, check, salvage and maintenance reports in toapi_store.go.

func damagedOf(d []engine.DamagedRecord) []apitype.DamagedRecord {
	if d == nil {
		return nil
	}
	out := make([]apitype.DamagedRecord, len(d))
	for i, r := range d {
		out[i] = apitype.DamagedRecord(r)
	}
	return out
}

func quarantinedOf(q []engine.Quarantined) []apitype.Quarantined {
	if q == nil {
		return nil
	}
	out := make([]apitype.Quarantined, len(q))
	for i, r := range q {
		out[i] = apitype.Quarantined(r)
	}
	return out
}

func taskPageOf(p engine.TaskPage) apitype.TaskPage {
	return apitype.TaskPage{Tasks: p.Tasks, Next: p.Next, Damaged: damagedOf(p.Damaged)}
}

func flowViewOf(v engine.FlowView) apitype.FlowView {
	return apitype.FlowView{
		Flow:            v.Flow,
		Tasks:           v.Tasks,
		TaskSummary:     v.TaskSummary,
		ControllerError: v.ControllerError,
		ContinuedBy:     v.ContinuedBy,
		FirstFailure:    v.FirstFailure,
		RunUsage:        v.RunUsage,
		ChainState:      (*apitype.Chain)(v.ChainState),
	}
}

func flowViewPageOf(p engine.FlowViewPage) apitype.FlowViewPage {
	out := apitype.FlowViewPage{Next: p.Next, Damaged: damagedOf(p.Damaged)}
	if p.Flows != nil {
		out.Flows = make([]apitype.FlowView, len(p.Flows))
		for i, v := range p.Flows {
			out.Flows[i] = flowViewOf(v)
		}
	}
	return out
}

func openGatesOf(g []engine.OpenGate) []apitype.OpenGate {
	if g == nil {
		return nil
	}
	out := make([]apitype.OpenGate, len(g))
	for i, o := range g {
		out[i] = apitype.OpenGate(o)
	}
	return out
}

func historyEntryOf(e engine.HistoryEntry) apitype.HistoryEntry {
	return apitype.HistoryEntry{Seq: e.Seq, At: e.At, Kind: apitype.HistoryKind(e.Kind),
		Summary: e.Summary, By: e.By, TaskID: e.TaskID, Data: e.Data}
}

func historyPageOf(p engine.HistoryPage) apitype.HistoryPage {
	out := apitype.HistoryPage{Next: p.Next, Dropped: p.Dropped, Status: p.Status}
	if p.Entries != nil {
		out.Entries = make([]apitype.HistoryEntry, len(p.Entries))
		for i, e := range p.Entries {
			out.Entries[i] = historyEntryOf(e)
		}
	}
	return out
}

// ChainHalted says why no more work of chain c may start, or "" when it
// may, or when c is nil (see engine.Chain.Halted).
func ChainHalted(c *apitype.Chain) string {
	if c == nil {
		return ""
	}
	return (*engine.Chain)(c).Halted()
}

// The limits the engine sets on what the API is asked, as apitype names
// them (toapi_store_test.go checks they are the engine's numbers), so
// that a command can refuse a flag with its own words before it asks.
const (
	// MaxAttempts is the most attempts one task may have.
	MaxAttempts = apitype.MaxAttempts
	// MaxNotifyTo is the most destinations one flow's notices may go to,
	// and MaxNotifyTemplate the most bytes of its notice template.
	MaxNotifyTo       = apitype.MaxNotifyTo
	MaxNotifyTemplate = apitype.MaxNotifyTemplate
	// MaxHistoryPage is the most entries one History call returns.
	MaxHistoryPage = apitype.MaxHistoryPage
)

// ValidSessionName reports whether name may name a session.
func ValidSessionName(name string) bool { return engine.ValidSessionName(name) }
