package flows

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// graphFormats is what GraphFormats returns. Read-only.
var graphFormats = [...]string{"mermaid", "dot", "ascii"}

// GraphFormats returns the formats Graph renders, in a new slice the
// caller may change.
func GraphFormats() []string { return slices.Clone(graphFormats[:]) }

// GraphNode is one step in a workflow graph.
type GraphNode struct {
	ID string
	// Type is parallel, for_each, workflow, run, approval, input or step.
	Type string
	// Detail is the command, path, expression or prompt. A multi-line one
	// (a run: block) keeps its lines, separated by "\n": at most
	// maxDetailLines of them, blank ones dropped, each at most 80 runes.
	Detail string
}

// GraphEdge connects two steps. Label is "next" for sequence, "stdin" and
// "for_each" for data refs, and "when: <condition>" (at most 70 runes of
// condition) for condition refs.
type GraphEdge struct {
	From, To, Label string
}

// GraphModel returns the nodes and edges Graph draws (lobster-format §17);
// ${arg} templates in details are resolved from args. Refs to parallel
// branch ids point at the parallel step.
func GraphModel(wf *Workflow, args map[string]any) ([]GraphNode, []GraphEdge) {
	owner := map[string]string{}
	for _, s := range wf.Steps {
		owner[s.ID] = s.ID
		if s.Parallel != nil {
			for _, b := range s.Parallel.Branches {
				owner[b.ID] = s.ID
			}
		}
	}
	var nodes []GraphNode
	var edges []GraphEdge
	for i := range wf.Steps {
		s := &wf.Steps[i]
		nodes = append(nodes, GraphNode{ID: s.ID, Type: graphType(s), Detail: detailLines(graphDetail(s, args))})
		if i > 0 {
			edges = append(edges, GraphEdge{From: wf.Steps[i-1].ID, To: s.ID, Label: "next"})
		}
		ref := func(text, label string) {
			seen := map[string]bool{}
			for _, m := range refRE.FindAllStringSubmatch(text, -1) {
				if from, ok := owner[m[1]]; ok && !seen[from] {
					seen[from] = true
					edges = append(edges, GraphEdge{From: from, To: s.ID, Label: label})
				}
			}
		}
		if str, ok := s.Stdin.(string); ok {
			ref(str, "stdin")
		}
		if s.ForEach != nil {
			ref(s.ForEach.Expr, "for_each")
		}
		if w, ok := s.When.(string); ok {
			ref(w, "when: "+truncate(w, 70))
		}
	}
	return nodes, edges
}

// Graph renders wf as a mermaid flowchart, a dot digraph or ascii text;
// format must be one of GraphFormats.
func Graph(wf *Workflow, format string, args map[string]any) (string, error) {
	nodes, edges := GraphModel(wf, args)
	var b strings.Builder
	switch format {
	case "mermaid":
		b.WriteString("flowchart TD\n")
		for _, n := range nodes {
			label := htmlEscape(n.ID)
			if n.Detail != "" {
				label += "<br/>" + strings.ReplaceAll(htmlEscape(n.Detail), "\n", "<br/>")
			}
			open, closing := "[\"", "\"]"
			if n.Type == "approval" {
				open, closing = "{\"", "\"}"
			}
			fmt.Fprintf(&b, "  %s%s%s%s\n", mermaidID(n.ID), open, label, closing)
		}
		for _, e := range edges {
			arrow := "-->"
			if e.Label != "next" {
				arrow = "-.->"
			}
			fmt.Fprintf(&b, "  %s %s|\"%s\"| %s\n", mermaidID(e.From), arrow, htmlEscape(e.Label), mermaidID(e.To))
		}
	case "dot":
		b.WriteString("digraph workflow {\n  rankdir=TB;\n")
		for _, n := range nodes {
			shape := "box"
			if n.Type == "approval" {
				shape = "diamond"
			}
			label := n.ID
			if n.Detail != "" {
				label += "\n" + n.Detail // dotQuote keeps the lines
			}
			fmt.Fprintf(&b, "  %s [label=%s, shape=%s];\n", dotQuote(n.ID), dotQuote(label), shape)
		}
		for _, e := range edges {
			style := ""
			if e.Label != "next" {
				style = ", style=dashed"
			}
			fmt.Fprintf(&b, "  %s -> %s [label=%s%s];\n", dotQuote(e.From), dotQuote(e.To), dotQuote(e.Label), style)
		}
		b.WriteString("}\n")
	case "ascii":
		b.WriteString("Workflow Graph\n\nNodes:\n")
		for _, n := range nodes {
			head := fmt.Sprintf("  [%s] %s", n.Type, n.ID)
			b.WriteString(head)
			if n.Detail != "" {
				// Later lines of a multi-line detail line up under the first.
				indent := "\n" + strings.Repeat(" ", utf8.RuneCountInString(head)+2)
				b.WriteString(": " + strings.ReplaceAll(n.Detail, "\n", indent))
			}
			b.WriteString("\n")
		}
		b.WriteString("\nEdges:\n")
		for _, e := range edges {
			fmt.Fprintf(&b, "  %s -> %s (%s)\n", e.From, e.To, e.Label)
		}
	default:
		return "", fmt.Errorf("graph format must be one of: %s", strings.Join(graphFormats[:], ", "))
	}
	return b.String(), nil
}

func graphType(s *Step) string {
	switch k := s.Kind(); k {
	case "none":
		return "step"
	case "run":
		if s.Approval != nil {
			return "approval"
		}
		return "run"
	default:
		return k
	}
}

func graphDetail(s *Step, args map[string]any) string {
	switch {
	case s.Parallel != nil:
		ids := make([]string, len(s.Parallel.Branches))
		for i, b := range s.Parallel.Branches {
			ids[i] = b.ID
			if b.Pipeline != "" {
				ids[i] += " (pipeline)"
			}
		}
		return "wait: " + s.Parallel.Wait + "; " + strings.Join(ids, ", ")
	case s.Workflow != "":
		return ResolveArgsTemplate(s.Workflow, args)
	case s.ForEach != nil:
		return s.ForEach.Expr
	case s.Pipeline != "":
		return pipelineDetail(s.Pipeline, args)
	case s.Run != "":
		return ResolveArgsTemplate(s.Run, args)
	case s.Input != nil:
		return s.Input.Prompt
	case s.Approval != nil:
		return ApprovalPrompt(s)
	}
	return ""
}

// pipelineDetail is a pipeline's text with each stage on a line of its
// own, the later ones starting with "| ", so a graph shows its stages.
// The text is split into stages as written, then ${arg} templates are
// resolved in each, so a value never shows as a stage of its own.
func pipelineDetail(text string, args map[string]any) string {
	stages, err := ParsePipeline(text)
	if err != nil {
		return ResolveArgsTemplate(text, args)
	}
	lines := make([]string, len(stages))
	for i, st := range stages {
		lines[i] = ResolveArgsTemplate(st.Raw, args)
		if i > 0 {
			lines[i] = "| " + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// maxDetailLines is how many lines of a multi-line detail a graph shows.
const maxDetailLines = 8

// detailLines is s as a node's Detail: each line's spaces collapsed and
// cut to 80 runes, blank lines dropped, and past maxDetailLines the rest
// counted on a last line, so a multi-line run: reads as the several
// commands it is.
func detailLines(s string) string {
	var lines []string
	for line := range strings.Lines(s) {
		if line = truncate(line, 80); line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) > maxDetailLines {
		more := len(lines) - (maxDetailLines - 1)
		lines = append(lines[:maxDetailLines-1], fmt.Sprintf("… (%d more lines)", more))
	}
	return strings.Join(lines, "\n")
}

func truncate(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

var mermaidIDRE = regexp.MustCompile(`[^A-Za-z0-9_]`)

func mermaidID(id string) string { return "n_" + mermaidIDRE.ReplaceAllString(id, "_") }

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;", "|", "&#124;").Replace(s)
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
