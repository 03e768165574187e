package maintenance

import (
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// taskTimestamps repairs t's timestamps when the audit would flag them
// (inconsistent_timestamps), by the engine's rules (engine.RepairedTaskTimes),
// guarded by the updated_at this pass read.
func (p *pass) taskTimestamps(t *stored.Task) {
	if _, changes := engine.RepairedTaskTimes(t); len(changes) == 0 {
		return
	}
	if p.act("repair the timestamps of task "+t.ID, func() error { _, err := p.eng.RepairTaskTimestamps(t.ID, t.UpdatedAt); return err }) {
		p.sum.Tasks.TimestampsRepaired++
	}
}

// flowTimestamps is taskTimestamps for a flow, guarded by its revision.
func (p *pass) flowTimestamps(f *sdk.Flow) {
	if _, changes := engine.RepairedFlowTimes(f); len(changes) == 0 {
		return
	}
	if p.act("repair the timestamps of flow "+f.ID, func() error { _, err := p.eng.RepairFlowTimestamps(f.ID, f.Revision); return err }) {
		p.sum.TaskFlows.TimestampsRepaired++
	}
}
