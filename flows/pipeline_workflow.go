package flows

import (
	"encoding/json"
	"fmt"
	"strings"
)

// PipelineStepID is the id of the one step of a pipeline string's
// workflow (PipelineWorkflow).
const PipelineStepID = "pipeline"

// PipelineWorkflow returns the workflow that runs a pipeline string, as
// "flowgate pipeline run 'exec … | where …'" does: one pipeline: step,
// id PipelineStepID, with every default of a step in a file. It fails
// with the parse error of a pipeline that does not parse.
func PipelineWorkflow(text string) (*Workflow, error) {
	if _, err := ParsePipeline(text); err != nil {
		return nil, err
	}
	doc, err := json.Marshal(map[string]any{"steps": []any{map[string]any{"id": PipelineStepID, "pipeline": text}}})
	if err != nil {
		return nil, err
	}
	return Parse("pipeline.json", doc)
}

// PipelineDryRun is Lobster's dry run of a pipeline string (§14.2): a
// line per stage with its arguments. It fails with *UnknownCommandError
// for a stage whose command known does not hold.
func PipelineDryRun(stages []Stage, known func(name string) bool) (string, error) {
	var b strings.Builder
	plural := "s"
	if len(stages) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "[DRY RUN] Pipeline (%d stage%s):\n", len(stages), plural)
	for i, st := range stages {
		if !known(st.Name) {
			return "", &UnknownCommandError{Name: st.Name}
		}
		var parts []string
		for _, k := range sortedKeys(st.Args.Named) {
			v := st.Args.Named[k]
			s, ok := v.(string)
			if !ok {
				s = renderJSON(v)
			}
			parts = append(parts, k+"="+s)
		}
		parts = append(parts, st.Args.Positional...)
		args := ""
		if len(parts) > 0 {
			args = "  args: " + strings.Join(parts, ", ")
		}
		fmt.Fprintf(&b, "  %d. %s%s\n", i+1, st.Name, args)
	}
	return b.String(), nil
}
