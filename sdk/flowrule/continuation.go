package flowrule

import (
	"slices"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// Continuation works out what the continuation of a run with plan p does
// with assignments as (nil: each node that runs again keeps its planned
// work) from node from (empty: from where the run failed), as every host
// does. It returns the assignments to record (one
// per node that runs again, in plan order), the nodes reused and the
// nodes rerun.
//
// A node reruns when it did not succeed, or when it succeeded but depends,
// directly or not, on a node that did not, in the plan's dependency graph
// or in the graph the assignments revise (invalidation is conservative).
// Every other node is reused: its result stands and it never runs again.
// With from, node from and every node after it count as unfinished.
// It refuses, with an sdk.ErrInvalid error that names the rule: a from
// the plan does not have; a plan or
// revised graph with a cycle or an unknown dependency; an assignment for
// a node the plan does not have (ids are stable) or for a node that is
// reused; two assignments for one node; and, when assignments are given,
// an unfinished node without one.
func Continuation(p *sdk.Plan, as []sdk.Assignment, from string) (assigned []sdk.Assignment, reuse, rerun []string, err error) {
	old := graphOf(p, nil)
	if err := old.check("the source plan"); err != nil {
		return nil, nil, nil, err
	}
	byNode := map[string]sdk.Assignment{}
	for _, a := range as {
		a.Node = strings.TrimSpace(a.Node)
		if _, ok := old.deps[a.Node]; !ok {
			return nil, nil, nil, Refuse("stable identities", "the assignment names node %q, which the source plan does not have (its nodes are %s); a continuation keeps the plan's node ids", a.Node, strings.Join(old.order, ", "))
		}
		if _, dup := byNode[a.Node]; dup {
			return nil, nil, nil, Refuse("one assignment per node", "node %q has two assignments; give each node at most one", a.Node)
		}
		byNode[a.Node] = a
	}
	if _, ok := old.deps[from]; from != "" && !ok {
		return nil, nil, nil, Refuse("stable identities", "there is no step %q to rerun from; the source plan's nodes are %s", from, strings.Join(old.order, ", "))
	}
	unfinished, after := map[string]bool{}, false
	for _, n := range p.Nodes {
		after = after || n.ID == from
		if n.Status != sdk.NodeSucceeded || after {
			unfinished[n.ID] = true
		}
	}
	again := old.descendants(unfinished)
	for _, a := range as {
		if !again[a.Node] {
			return nil, nil, nil, Refuse("reuse", "node %q succeeded and depends on no node that did not: its result is reused and it never runs again, so it takes no assignment", a.Node)
		}
	}
	if as != nil {
		var missing []string
		for _, id := range old.order {
			if _, ok := byNode[id]; unfinished[id] && !ok {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return nil, nil, nil, Refuse("remaining assignments", "nodes %s did not finish and have no assignment; give every unfinished node one", strings.Join(missing, ", "))
		}
	}
	revised := graphOf(p, byNode)
	if err := revised.check("the revised plan"); err != nil {
		return nil, nil, nil, err
	}
	again = revised.descendants(again)
	for _, id := range old.order {
		if !again[id] {
			reuse = append(reuse, id)
			continue
		}
		rerun = append(rerun, id)
		a, ok := byNode[id]
		if !ok {
			a = sdk.Assignment{Node: id}
		}
		assigned = append(assigned, a)
	}
	return assigned, reuse, rerun, nil
}

// graph is a plan's dependency graph: each node's dependencies.
type graph struct {
	order []string
	deps  map[string][]string
}

// graphOf is p's graph, with the dependencies the assignments replace.
func graphOf(p *sdk.Plan, byNode map[string]sdk.Assignment) graph {
	g := graph{deps: map[string][]string{}}
	for _, n := range p.Nodes {
		g.order = append(g.order, n.ID)
		g.deps[n.ID] = n.DependsOn
		if a, ok := byNode[n.ID]; ok && a.DependsOn != nil {
			g.deps[n.ID] = *a.DependsOn
		}
	}
	return g
}

// check refuses an unknown dependency or a cycle in g, which is what.
func (g graph) check(what string) error {
	for _, id := range g.order {
		for _, d := range g.deps[id] {
			if _, ok := g.deps[d]; !ok {
				return Refuse("known dependencies", "in %s node %q depends on %q, which is not a node of the plan", what, id, d)
			}
		}
	}
	const (
		unseen = iota
		open
		done
	)
	mark := map[string]int{}
	var visit func(id string, path []string) error
	visit = func(id string, path []string) error {
		switch mark[id] {
		case open:
			return Refuse("acyclic", "%s has a dependency cycle: %s; depends_on edits must keep the graph acyclic", what, strings.Join(append(path, id), " -> "))
		case done:
			return nil
		}
		mark[id] = open
		for _, d := range g.deps[id] {
			if err := visit(d, append(path, id)); err != nil {
				return err
			}
		}
		mark[id] = done
		return nil
	}
	for _, id := range g.order {
		if err := visit(id, nil); err != nil {
			return err
		}
	}
	return nil
}

// descendants returns from and every node that depends on one of them,
// directly or not.
func (g graph) descendants(from map[string]bool) map[string]bool {
	out := map[string]bool{}
	for id := range from {
		out[id] = true
	}
	for changed := true; changed; {
		changed = false
		for _, id := range g.order {
			if !out[id] && slices.ContainsFunc(g.deps[id], func(d string) bool { return out[d] }) {
				out[id], changed = true, true
			}
		}
	}
	return out
}
