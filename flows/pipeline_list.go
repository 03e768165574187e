package flows

import (
	"fmt"
	"strings"
)

// PipelineRef is one typed pipeline of a workflow: a pipeline: step's, a
// parallel branch's or a for_each sub-step's.
type PipelineRef struct {
	// ID is the step's id, "<step id>/<branch id>" for a branch, or
	// "<step id>/<sub-step id>" for a for_each sub-step.
	ID string
	// Text is the pipeline with its ${arg} templates resolved, for
	// display: it is not what runs, since refs are resolved in the parsed
	// words, not in the text.
	Text string
	// Stages are the stages the pipeline as written parses to, with the
	// refs in their words resolved (ResolveStages); nil when it does not
	// parse, or when a flag's name resolves to "_".
	Stages []Stage
}

// Pipelines lists the typed pipelines of wf in file order, with ${arg}
// templates resolved from args. Step refs ($step.json) stay as they are
// written: they are only known when the pipeline runs.
func Pipelines(wf *Workflow, args map[string]any) []PipelineRef {
	var out []PipelineRef
	add := func(id, text string) {
		if text == "" {
			return
		}
		ref := PipelineRef{ID: id, Text: ResolveArgsTemplate(text, args)}
		if stages, err := ParsePipeline(text); err == nil {
			ref.Stages, _ = ResolveStages(stages, args, nil)
		}
		out = append(out, ref)
	}
	for _, s := range wf.Steps {
		add(s.ID, s.Pipeline)
		if s.Parallel != nil {
			for _, b := range s.Parallel.Branches {
				add(s.ID+"/"+b.ID, b.Pipeline)
			}
		}
		if s.ForEach != nil {
			for _, sub := range s.ForEach.Steps {
				add(s.ID+"/"+sub.ID, sub.Pipeline)
			}
		}
	}
	return out
}

// Names lists the stage names of p; nil when it does not parse yet.
func (p PipelineRef) Names() []string {
	if p.Stages == nil {
		return nil
	}
	names := make([]string, len(p.Stages))
	for i, st := range p.Stages {
		names[i] = st.Name
	}
	return names
}

// StageNames is the stage names of p joined by " | ", or its text when
// it does not parse yet.
func (p PipelineRef) StageNames() string {
	if p.Stages == nil {
		return p.Text
	}
	return strings.Join(p.Names(), " | ")
}

// CheckPipelineCommands reports the first stage of wf's pipelines whose
// command known does not hold, in Lobster's dry-run words: "Workflow step
// X pipeline references unknown command: Y". A stage whose name holds a
// step ref is left for run time, as Lobster defers it.
func CheckPipelineCommands(wf *Workflow, args map[string]any, known func(name string) bool) error {
	for _, p := range Pipelines(wf, args) {
		for _, st := range p.Stages {
			if !refRE.MatchString(st.Name) && !known(st.Name) {
				return &UnknownStageError{Step: p.ID, Name: st.Name}
			}
		}
	}
	return nil
}

// UnknownStageError is a pipeline in a workflow file naming a command no
// stage provides.
type UnknownStageError struct{ Step, Name string }

func (e *UnknownStageError) Error() string {
	return fmt.Sprintf("Workflow step %s pipeline references unknown command: %s", e.Step, e.Name)
}
