package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flowgate/flowgate/flows"
)

// spliceWarnings describes each arg or step ref wf pastes into a shell
// command, as "FILE:LINE:COL: advice" lines.
func spliceWarnings(wf *flows.Workflow) []string {
	var out []string
	for _, sp := range flows.Splices(wf) {
		out = append(out, fmt.Sprintf("%s:%d:%d: %s", wf.File, sp.Line, sp.Column, sp.Advice()))
	}
	return out
}

// warnSplices prints spliceWarnings to w, with how to refuse them.
func warnSplices(w io.Writer, warnings []string) {
	for _, s := range warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	if len(warnings) > 0 {
		fmt.Fprintln(w, "warning: strict_refs: true in the file (or --strict-refs) refuses these; see docs/pipelines.md")
	}
}

// refuseSplices is --strict-refs: a usage error listing every splice.
func refuseSplices(wf *flows.Workflow) error {
	w := spliceWarnings(wf)
	if len(w) == 0 {
		return nil
	}
	return usageError{errors.New("--strict-refs: " + strings.Join(w, "\n"))}
}
