package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
)

// StagesKey is the key of the flow state's stage reports, by pipeline id
// (see StageReports).
const StagesKey = "stages"

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

// StageReport is how far one typed pipeline got in the last pass that ran
// it: each stage, with how many items it produced, and where it stands.
type StageReport struct {
	Stages []StageCount `json:"stages"`
	// At is the index of the stage the pipeline stands at (its task runs,
	// a gate stopped it, or it failed there); -1 when it ran to its end.
	At int `json:"at"`
	// Waiting is what it waits for at At: "task", "approval", "input",
	// or "cancel" (its gate was denied and the run ends); empty when it
	// does not wait.
	Waiting string `json:"waiting,omitempty"`
	// Failed says the stage at At failed.
	Failed bool `json:"failed,omitempty"`
	// More is how many stages, after those Stages lists, the report
	// leaves out to stay small (a pipeline of very many stages or very
	// long stage names); zero when it lists them all.
	More int `json:"more,omitempty"`
}

// StageCount is one stage of a StageReport.
type StageCount struct {
	Name string `json:"name"`
	// Items is how many items the stage produced; nil when it has not run.
	Items *int `json:"items,omitempty"`
}

// StageReports reads the stage reports of a pipeline flow's state, by
// pipeline id: "<step id>" for a pipeline: step, "<step id>/<branch id>"
// for a parallel branch, "<step id>/<sub-step id>[<item>]" for a for_each
// sub-step. A state without any is an empty map.
func StageReports(state json.RawMessage) (map[string]StageReport, error) {
	var s struct {
		Stages map[string]StageReport `json:"stages"`
	}
	if len(state) == 0 {
		return map[string]StageReport{}, nil
	}
	if err := json.Unmarshal(state, &s); err != nil {
		return nil, fmt.Errorf("read the flow's stage reports: %w", err)
	}
	if s.Stages == nil {
		s.Stages = map[string]StageReport{}
	}
	return s.Stages, nil
}

// countStages records p's report after a run that produced counts and
// ended with err.
func (r *run) countStages(p *pipe, err error) {
	rep := StageReport{At: -1, Stages: make([]StageCount, len(p.stages))}
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
	rep.fit()
	if r.st.Stages == nil {
		r.st.Stages = map[string]StageReport{}
	}
	r.st.Stages[key] = rep
}

// fit cuts the report's stage list to the first stages that keep its
// JSON within maxReportBytes, and counts the others in More.
func (rep *StageReport) fit() {
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
