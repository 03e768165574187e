package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flowgate/flowgate/sdk"
)

// Bounds of the stage reports, so that they fit in the controller's part
// of a flow's state (see CheckBound): at most maxStageReports pipelines of
// one flow keep a report (a for_each over many items reports its first
// ones), a pipeline whose id takes more than maxReportKey bytes of JSON
// keeps none, and a report lists the first stages that keep it within
// maxReportBytes of JSON, More counting the others.
const (
	maxStageReports = 64
	maxReportKey    = 256
	maxReportBytes  = 512
)

// countStages records p's report after a run that produced counts and
// ended with err.
func (r *run) countStages(p *pipe, err error) {
	rep := sdk.StageReport{At: -1, Stages: make([]sdk.StageCount, len(p.stages))}
	for i, st := range p.stages {
		rep.Stages[i].Name = st.Name
		if i < len(p.counts) {
			n := p.counts[i]
			rep.Stages[i].Items = &n
		}
	}
	if err != nil || len(p.counts) < len(p.stages) {
		rep.At = min(len(p.counts), len(p.stages)-1)
	}
	switch {
	case errors.Is(err, errStageWaits) && (p.req != nil || p.running != nil):
		rep.Waiting = "task"
	case errors.Is(err, errStageWaits) && p.gate != nil:
		rep.Waiting = p.gate.Kind
	case errors.Is(err, errStageWaits):
		rep.Waiting = "cancel"
	case err != nil:
		rep.Failed = true
	}
	key := p.id
	if p.s.ForEach != nil {
		key = fmt.Sprintf("%s[%d]", key, p.iteration)
	}
	k, _ := json.Marshal(key)
	if _, ok := r.st.Stages[key]; len(k) > maxReportKey || !ok && len(r.st.Stages) >= maxStageReports {
		return
	}
	fitReport(&rep)
	if r.st.Stages == nil {
		r.st.Stages = map[string]sdk.StageReport{}
	}
	r.st.Stages[key] = rep
}

// fitReport cuts the report's stage list to the first stages that keep
// its JSON within maxReportBytes, and counts the others in More.
func fitReport(rep *sdk.StageReport) {
	all := rep.Stages
	rep.Stages, rep.More = all[:0], len(all)
	b, _ := json.Marshal(rep)
	size, n := len(b), 0
	for _, st := range all {
		c, _ := json.Marshal(st)
		if size+len(c)+1 > maxReportBytes {
			break
		}
		size, n = size+len(c)+1, n+1
	}
	rep.Stages, rep.More = all[:n], len(all)-n
}
