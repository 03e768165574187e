package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// regexDeps is how plans found a step's dependencies before stepRefs: a
// regexp per earlier step, matched against the step's text. stepRefs
// must find the same ones.
func regexDeps(steps []flows.Step, i int) []string {
	s := steps[i]
	text, err := json.Marshal(s)
	all := err != nil || (s.Kind() == "input" && s.Stdin == nil)
	var deps []string
	for _, e := range steps[:i] {
		re := regexp.MustCompile(`\$\{?` + regexp.QuoteMeta(e.ID) + `\b`)
		if all || re.Match(text) || strings.Contains(string(text), flows.RefEnvName(e.ID, "")) {
			deps = append(deps, e.ID)
		}
	}
	return deps
}

// stepRefs finds a step's dependencies as the regexps did, for refs with
// and without braces, ids that are prefixes of others or end in a dash,
// step variables, and input steps without stdin.
func TestStepRefsFindWhatTheRegexpsFound(t *testing.T) {
	t.Parallel()
	wf := `name: refs
steps:
  - id: a
    run: echo a
  - id: ab
    run: echo $a.stdout
  - id: a-b
    run: echo ${ab.json} $a-
  - id: x-
    run: echo $a-b.json
  - id: c
    run: echo "$LOBSTER_STEP_A_B_STDOUT" $x-.json
  - id: d
    stdin: $c.json
    when: $ab.approved
    run: echo $abc $a_
  - id: ask
    input:
      prompt: Which?
      responseSchema: {type: object}
  - id: e
    for_each: $d.json
    steps:
      - id: inner
        run: echo $item $LOBSTER_STEP_X__JSON
`
	file := filepath.Join(t.TempDir(), "refs.lobster")
	require.NoError(t, os.WriteFile(file, []byte(wf), 0o600))
	w, err := flows.Load(file)
	require.NoError(t, err)
	refs := newStepRefs(w.Steps)
	for i, s := range w.Steps {
		require.Equal(t, regexDeps(w.Steps, i), refs.deps(i), "step %s", s.ID)
	}
}

// A plan's dependencies come from the memo once its workflow was planned,
// still as stepRefs finds them, and a plan that changes its lists does not
// change the next plan's; a changed file is a new workflow, planned anew.
func TestPlanDepsAreKeptPerWorkflow(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "memo.lobster")
	write := func(ref string) *flows.Workflow {
		body := "name: memo\nsteps:\n  - id: a\n    run: echo a\n  - id: b\n    run: echo a\n  - id: c\n    run: echo " + ref + "\n"
		require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
		w, err := flows.Load(file)
		require.NoError(t, err)
		return w
	}
	w := write("$a.stdout")
	first := planOf(w, nil)
	require.Equal(t, []string{"a"}, first.Nodes[2].DependsOn)
	first.Nodes[2].DependsOn[0] = "changed"
	require.Equal(t, []string{"a"}, planOf(w, nil).Nodes[2].DependsOn, "the memo's lists are not the plan's")
	require.Equal(t, []string{"b"}, planOf(write("$b.stdout"), nil).Nodes[2].DependsOn, "a new workflow is planned anew")
}
