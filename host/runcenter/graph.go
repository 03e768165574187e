package runcenter

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// stepGraph is a flow's plan drawn as SVG by the server: one box per
// node, top to bottom in plan order, a parallel node's branches side by
// side inside its box, "next" arrows between boxes and a ref (stdin,
// for_each, when:) as a dashed curve on the right. It reads only public
// fields of the flow (its plan under sdk.PlanKey, status and step) and
// its tasks, matched to nodes by label, so any controller that keeps a
// plan gets a graph. The flow page redraws its main part on every
// history event, so the graph follows the run with no layout in the
// browser, and it is plain SVG links with JavaScript off.
type stepGraph struct {
	Width, Height int
	Nodes         []graphNode
	Edges         []graphEdge
}

// graphNode is one box: where it is, what it says and where it links.
type graphNode struct {
	ID, Type string
	Phase    sdk.NodePhase
	X, Y     int
	W, H     int
	// PhaseX is where the phase is written, right-aligned in the box.
	PhaseX int
	// Href is the node's task card on the page (its newest task), or
	// the gates page for a gate waiting for an answer; empty for a node
	// with nothing to open.
	Href string
	// Title is the tooltip: the node, its phase and its timing.
	Title    string
	Texts    []graphText
	Branches []graphBranch
}

// graphText is one line of text in a box.
type graphText struct {
	X, Y  int
	Class string
	Text  string
}

// graphBranch is a parallel node's branch, a box inside its node's.
type graphBranch struct {
	ID       string
	Phase    sdk.NodePhase
	X, Y     int
	W, H     int
	Href     string
	Pipeline bool
	// Label is the id as it fits the box, written at TextX, TextY.
	Label        string
	TextX, TextY int
}

// graphEdge is an arrow: Path is its SVG path, Ref marks a dashed ref.
type graphEdge struct {
	Path  string
	Ref   bool
	Label string
}

// Layout of the graph, in SVG user units (pixels at full width; the SVG
// scales down to a phone's width).
const (
	graphMargin    = 12
	nodeWidth      = 360
	nodeGap        = 30
	lineHeight     = 16
	headHeight     = 26
	branchHeight   = 30
	branchesPerRow = 4
	refLanes       = 4
	laneWidth      = 14
	// lineRunes is how many runes of a detail line fit a box; detailShown
	// how many of its lines a box shows.
	lineRunes   = 46
	detailShown = 3
)

// Graph is the flow's step graph; nil for a flow without a plan.
func (p flowPage) Graph() *stepGraph {
	plan, err := flowrule.PlanOf(p.Flow)
	if err != nil || len(plan.Nodes) == 0 {
		return nil
	}
	return layoutGraph(p.Flow, plan, p.Tasks)
}

// layoutGraph draws plan, the plan of flow f with tasks.
func layoutGraph(f *sdk.Flow, plan *sdk.Plan, tasks []taskRow) *stepGraph {
	g := &stepGraph{Width: 2*graphMargin + nodeWidth + refLanes*laneWidth + laneWidth}
	at := map[string]int{}
	y := graphMargin
	for _, n := range plan.Nodes {
		mine := tasksOf(n.ID, tasks)
		gn := graphNode{ID: n.ID, Type: n.Type, Phase: nodePhase(f, n), X: graphMargin, Y: y, W: nodeWidth, PhaseX: graphMargin + nodeWidth - 10}
		if gn.Type == "" {
			gn.Type = "step"
		}
		gn.Href, gn.Title = nodeLink(f, gn, mine), nodeTitle(gn, mine)
		line := y + 18 // the baseline of the next line of text
		add := func(class, text string) {
			gn.Texts = append(gn.Texts, graphText{X: gn.X + 10, Y: line, Class: class, Text: text})
			line += lineHeight
		}
		add("gn-id", n.ID)
		for i, l := range strings.Split(n.Detail, "\n") {
			if i == detailShown {
				add("gn-more", "…")
				break
			}
			if l != "" {
				add("gn-detail", cut(l, lineRunes))
			}
		}
		if n.Condition != "" {
			add("gn-when", cut("when: "+n.Condition, lineRunes))
		}
		if it := n.Items; it != nil {
			add("gn-items", fmt.Sprintf("%d items: %d done, %d failed, %d running", it.Total, it.Done, it.Failed, it.Running))
		}
		if len(n.Branches) > 0 {
			gn.Branches = layoutBranches(f, n, gn, line-lineHeight+6, tasks)
			line += (len(n.Branches) + branchesPerRow - 1) / branchesPerRow * (branchHeight + 6)
		}
		gn.H = max(line-y-8, headHeight+4)
		at[n.ID] = len(g.Nodes)
		g.Nodes = append(g.Nodes, gn)
		y += gn.H + nodeGap
	}
	g.Height = y - nodeGap + graphMargin
	g.Edges = graphEdges(plan, g.Nodes, at)
	return g
}

// layoutBranches places node n's branches in rows of branchesPerRow
// inside its box gn, from y down.
func layoutBranches(f *sdk.Flow, n sdk.PlanNode, gn graphNode, y int, tasks []taskRow) []graphBranch {
	cols := min(len(n.Branches), branchesPerRow)
	w := (gn.W - 20 - (cols-1)*6) / cols
	out := make([]graphBranch, 0, len(n.Branches))
	for i, b := range n.Branches {
		phase := b.Phase
		if phase == "" {
			phase = sdk.PhasePending
		}
		if gn.Phase == sdk.PhaseCancelled && (phase == sdk.PhaseRunning || phase == sdk.PhasePending) {
			phase = sdk.PhaseCancelled
		}
		gb := graphBranch{ID: b.ID, Phase: phase, Pipeline: b.Pipeline, W: w, H: branchHeight,
			X: gn.X + 10 + (i%branchesPerRow)*(w+6), Y: y + (i/branchesPerRow)*(branchHeight+6), Label: cut(b.ID, max(w/8, 4))}
		gb.TextX, gb.TextY = gb.X+6, gb.Y+19
		if mine := tasksOf(n.ID+"/"+b.ID, tasks); len(mine) > 0 {
			gb.Href = "#task-" + mine[len(mine)-1].ID
		}
		out = append(out, gb)
	}
	return out
}

// graphEdges are plan's edges as pipeline graph draws them: "next" from
// each node to the one after it, and each ref as a dashed curve through
// one of refLanes lanes on the right, so refs that overlap are apart.
func graphEdges(plan *sdk.Plan, nodes []graphNode, at map[string]int) []graphEdge {
	var out []graphEdge
	for i := 1; i < len(nodes); i++ {
		a, b := nodes[i-1], nodes[i]
		x := a.X + a.W/2
		out = append(out, graphEdge{Path: fmt.Sprintf("M%d %d L%d %d", x, a.Y+a.H, x, b.Y-2), Label: "next"})
	}
	lane := 0
	for _, n := range plan.Nodes {
		for _, r := range n.Refs {
			from, ok := at[r.From]
			if !ok {
				continue
			}
			a, b := nodes[from], nodes[at[n.ID]]
			x := a.X + a.W
			bend := x + laneWidth*(1+lane%refLanes)
			lane++
			ya, yb := a.Y+a.H/2, b.Y+min(b.H/2, 20)
			out = append(out, graphEdge{Ref: true, Label: r.Label,
				Path: fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x, ya, bend, ya, bend, yb, x+2, yb)})
		}
	}
	return out
}

// nodePhase is where plan node n of flow f stands. A plan without
// phases (an older record, or a controller that keeps none) is read as
// the flow page read it before: ended nodes by status, the flow's step
// by the flow's status. A node left running or waiting in a flow that
// was cancelled shows cancelled; one in a flow that failed otherwise
// (lost, failed by the gateway) shows failed.
func nodePhase(f *sdk.Flow, n sdk.PlanNode) sdk.NodePhase {
	phase := n.Phase
	if phase == "" {
		switch {
		case n.Status == sdk.NodeSucceeded:
			phase = sdk.PhaseSucceeded
		case n.Status == sdk.NodeFailed:
			phase = sdk.PhaseFailed
		case n.ID == f.CurrentStep && f.Status == sdk.FlowWaiting:
			phase = sdk.PhaseWaiting
		case n.ID == f.CurrentStep && !f.Status.Terminal():
			phase = sdk.PhaseRunning
		case n.ID == f.CurrentStep && f.Status == sdk.FlowFailed:
			phase = sdk.PhaseFailed
		default:
			phase = sdk.PhasePending
		}
	}
	if f.Status.Terminal() && (phase == sdk.PhaseRunning || phase == sdk.PhaseWaiting) {
		if f.Status == sdk.FlowCancelled {
			return sdk.PhaseCancelled
		}
		return sdk.PhaseFailed
	}
	return phase
}

// tasksOf are the tasks of the node or branch labelled label, oldest
// first: a controller's tasks carry the label of the step they run, a
// pipeline's stages, branches, loop items and sub-workflow steps the
// step's id and "/", "[" or ">" after it (docs/pipelines.md).
func tasksOf(label string, tasks []taskRow) []*stored.Task {
	var out []*stored.Task
	for _, t := range tasks {
		rest, ok := strings.CutPrefix(t.Label, label)
		if ok && (rest == "" || strings.ContainsRune("/[>", rune(rest[0]))) {
			out = append(out, t.Task)
		}
	}
	return out
}

// nodeLink is where node n links: its newest task's card, or the gates
// page while it waits at a gate.
func nodeLink(f *sdk.Flow, n graphNode, tasks []*stored.Task) string {
	switch {
	case len(tasks) > 0:
		return "#task-" + tasks[len(tasks)-1].ID
	case n.Phase == sdk.PhaseWaiting:
		return "/gates?flow=" + url.QueryEscape(f.ID)
	}
	return ""
}

// nodeTitle is node n's tooltip: its id, type, phase, and when its tasks
// started and ended, with how long they took.
func nodeTitle(n graphNode, tasks []*stored.Task) string {
	title := fmt.Sprintf("%s (%s): %s", n.ID, n.Type, n.Phase)
	var start, end time.Time
	running := false
	for _, t := range tasks {
		if !t.StartedAt.IsZero() && (start.IsZero() || t.StartedAt.Before(start)) {
			start = t.StartedAt
		}
		running = running || !t.Status.Terminal()
		if t.EndedAt.After(end) {
			end = t.EndedAt
		}
	}
	if start.IsZero() {
		return title
	}
	title += "\nstarted " + start.UTC().Format("2006-01-02 15:04:05 UTC")
	if !running && !end.IsZero() {
		title += "\nended " + end.UTC().Format("2006-01-02 15:04:05 UTC") + " (" + end.Sub(start).Round(time.Millisecond).String() + ")"
	}
	return title
}

// cut is s cut to n runes, ending in "…" when cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
