package flows

import "fmt"

// ResolveStages returns stages with the ${arg} templates and $id.path
// refs in each of their words (command name, flag names, flag values,
// positional arguments) resolved against args and results, as
// ResolveTemplate resolves a run: line.
//
// A pipeline is parsed as written and its refs resolved afterwards, never
// the other way round (Lobster templates the text first): a value becomes
// part of the one word its ref was written in, so it cannot close a
// quote, add a stage or a word, or turn into a flag. Inside an exec
// --shell line it is still pasted into shell code, which strict_refs
// refuses (see Splices). Raw stays the stage's text as written.
//
// It fails with ErrPositionalFlag, naming the stage, when a flag's name
// resolves to "_".
func ResolveStages(stages []Stage, args map[string]any, results map[string]StepResult) ([]Stage, error) {
	word := func(s string) string { return ResolveTemplate(s, args, results) }
	out := make([]Stage, len(stages))
	for i, st := range stages {
		named := make(map[string]any, len(st.Args.Named))
		// Sorted, so that two flags whose names resolve alike always
		// leave the same one.
		for _, k := range sortedKeys(st.Args.Named) {
			name := word(k)
			if name == "_" {
				return nil, fmt.Errorf("stage %q: %w", st.Raw, ErrPositionalFlag)
			}
			v := st.Args.Named[k]
			if s, ok := v.(string); ok {
				v = word(s)
			}
			named[name] = v
		}
		var pos []string
		for _, p := range st.Args.Positional {
			pos = append(pos, word(p))
		}
		out[i] = Stage{Name: word(st.Name), Args: StageArgs{Named: named, Positional: pos}, Raw: st.Raw}
	}
	return out, nil
}
