package flowrule_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// dag is a plan of six nodes: a → b → c, a → d, e independent, f after c.
// b failed; c and f never ran; a, d and e succeeded.
func dag() *sdk.Plan {
	return &sdk.Plan{Nodes: []sdk.PlanNode{
		{ID: "a", Status: sdk.NodeSucceeded},
		{ID: "b", DependsOn: []string{"a"}, Status: sdk.NodeFailed},
		{ID: "c", DependsOn: []string{"b"}},
		{ID: "d", DependsOn: []string{"a"}, Status: sdk.NodeSucceeded},
		{ID: "e", Status: sdk.NodeSucceeded},
		{ID: "f", DependsOn: []string{"c"}},
	}}
}

func deps(ids ...string) *[]string { return &ids }

func TestContinuationReusesIndependentWorkAndRerunsTheRest(t *testing.T) {
	t.Parallel()
	assigned, reuse, rerun, err := flowrule.Continuation(dag(), nil, "")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "d", "e"}, reuse)
	require.Equal(t, []string{"b", "c", "f"}, rerun)
	require.Equal(t, []sdk.Assignment{{Node: "b"}, {Node: "c"}, {Node: "f"}}, assigned, "every rerun node gets an explicit assignment")
}

func TestContinuationInvalidatesSucceededDescendantsInTheOldGraph(t *testing.T) {
	t.Parallel()
	p := dag()
	// g succeeded after the failed b (it ran on b's partial output): it
	// is a descendant of a failed node and reruns.
	p.Nodes = append(p.Nodes, sdk.PlanNode{ID: "g", DependsOn: []string{"b"}, Status: sdk.NodeSucceeded})
	_, reuse, rerun, err := flowrule.Continuation(p, nil, "")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "d", "e"}, reuse)
	require.Equal(t, []string{"b", "c", "f", "g"}, rerun)

	// An assignment that drops g's dependency on b does not save it: the
	// old graph still invalidates it.
	_, reuse, rerun, err = flowrule.Continuation(p, []sdk.Assignment{{Node: "b"}, {Node: "c"}, {Node: "f"}, {Node: "g", DependsOn: deps("a")}}, "")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "d", "e"}, reuse)
	require.Equal(t, []string{"b", "c", "f", "g"}, rerun)
}

func TestContinuationWalksTheRevisedGraph(t *testing.T) {
	t.Parallel()
	// f no longer waits for c but for e; it still reruns (it never
	// finished), and e, which it now depends on, is still reused.
	_, reuse, rerun, err := flowrule.Continuation(dag(), []sdk.Assignment{{Node: "b"}, {Node: "c", Instruction: "use the cached input"}, {Node: "f", DependsOn: deps("e")}}, "")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "d", "e"}, reuse)
	require.Equal(t, []string{"b", "c", "f"}, rerun)
}

func TestContinuationRefusals(t *testing.T) {
	t.Parallel()
	cycle := dag()
	cycle.Nodes[0].DependsOn = []string{"f"}
	for name, tc := range map[string]struct {
		plan *sdk.Plan
		as   []sdk.Assignment
		want string
		from string
	}{
		"rerun from an unknown step":  {dag(), nil, "(stable identities): there is no step \"zz\"", "zz"},
		"cycle in the source plan":    {cycle, nil, "(acyclic)", ""},
		"edit makes a cycle":          {dag(), []sdk.Assignment{{Node: "b", DependsOn: deps("f")}, {Node: "c"}, {Node: "f"}}, "(acyclic)", ""},
		"edit names an unknown node":  {dag(), []sdk.Assignment{{Node: "b", DependsOn: deps("zz")}, {Node: "c"}, {Node: "f"}}, "(known dependencies)", ""},
		"assignment for unknown node": {dag(), []sdk.Assignment{{Node: "b2"}}, "(stable identities)", ""},
		"assignment for reused node":  {dag(), []sdk.Assignment{{Node: "b"}, {Node: "c"}, {Node: "f"}, {Node: "e", DependsOn: deps("b")}}, "(reuse)", ""},
		"duplicate assignment":        {dag(), []sdk.Assignment{{Node: "b"}, {Node: "b"}}, "(one assignment per node)", ""},
		"unfinished node unassigned":  {dag(), []sdk.Assignment{{Node: "b"}}, "(remaining assignments): nodes c, f", ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, _, err := flowrule.Continuation(tc.plan, tc.as, tc.from)
			require.ErrorIs(t, err, sdk.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestContinuationFromAStepRerunsItAndEverythingAfter(t *testing.T) {
	t.Parallel()
	_, reuse, rerun, err := flowrule.Continuation(dag(), nil, "d")
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, reuse)
	require.Equal(t, []string{"b", "c", "d", "e", "f"}, rerun)
}
