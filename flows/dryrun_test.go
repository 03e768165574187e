package flows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

const planFile = `
args:
  url: {default: https://example.com}
steps:
  - id: fetch-data
    run: curl ${url}
    timeout_ms: 500
    on_error: continue
    retry: {max: 3, backoff: exponential, jitter: true}
  - id: approve_step
    run: echo check
    approval: true
  - id: conditional
    run: echo never
    when: false
  - id: after
    run: echo $approve_step.approved $fetch-data.stdout $HOME.json
    stdin: $fetch-data.stdout
    when: $approve_step.approved
  - id: fan
    parallel:
      timeout_ms: 100
      branches:
        - {id: a, run: echo a}
  - id: loop
    for_each: $fetch-data.json
    batch_size: 2
    steps:
      - {id: s, run: echo $item.json}
  - id: child
    workflow: ./${url}.yaml
    workflow_args: {b: 1, a: 2}
  - id: ask
    input:
      prompt: Why?
      responseSchema: {type: object}
  - id: gate_only
    approval: Go?
    stdin: {a: "<b>"}
`

func TestDryRun(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("plan.yaml", []byte(planFile))
	require.NoError(t, err)
	require.Equal(t, `[DRY RUN] Would execute 9 steps:

  1. fetch-data  [shell]
     run: curl https://example.com
     timeout: 500ms
     on_error: continue
     retry: up to 3 attempts, exponential backoff (base: 1000ms, jitter)
  2. approve_step  [shell]
     run: echo check
     [approval required]
  3. conditional  [skipped — condition: false]
  4. after  [shell]
     run: echo true $fetch-data.stdout $HOME.json  [contains step output refs — unknown at plan time]
     stdin: $fetch-data.stdout  [output unknown at plan time]
  5. fan  [parallel]
     wait: all
     timeout: 100ms
     branch a: [shell] echo a
  6. loop  [for_each]
     for_each: $fetch-data.json
     item_var: item, index_var: index
     batch_size: 2
     sub-steps: 1
  7. child  [workflow]
     workflow: ./https://example.com.yaml
     args: a, b
  8. ask  [input]
     prompt: Why?
     [input required]
  9. gate_only  [no-op]
     stdin: {"a":"<b>"}
     [approval required]
`, flows.DryRun(wf, flows.ResolveArgs(wf, nil)))
}

func TestGraph(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("g.yaml", []byte(`
args:
  q: {default: "a&b"}
steps:
  - id: fetch
    run: curl "${q}" | jq
  - id: p
    parallel:
      branches: [{id: b, run: echo y}]
  - id: ok
    run: echo ship
    approval: true
    stdin: $fetch.json
  - id: loop.x
    for_each: $fetch.json.items
    when: $ok.approved && $b.stdout == 'y'
    steps:
      - {id: s, run: echo}
`))
	require.NoError(t, err)
	args := flows.ResolveArgs(wf, nil)

	mermaid, err := flows.Graph(wf, "mermaid", args)
	require.NoError(t, err)
	require.Equal(t, `flowchart TD
  n_fetch["fetch<br/>curl &quot;a&amp;b&quot; &#124; jq"]
  n_p["p<br/>wait: all; b"]
  n_ok{"ok<br/>echo ship"}
  n_loop_x["loop.x<br/>$fetch.json.items"]
  n_fetch -->|"next"| n_p
  n_p -->|"next"| n_ok
  n_fetch -.->|"stdin"| n_ok
  n_ok -->|"next"| n_loop_x
  n_fetch -.->|"for_each"| n_loop_x
  n_ok -.->|"when: $ok.approved &amp;&amp; $b.stdout == 'y'"| n_loop_x
  n_p -.->|"when: $ok.approved &amp;&amp; $b.stdout == 'y'"| n_loop_x
`, mermaid)

	dot, err := flows.Graph(wf, "dot", args)
	require.NoError(t, err)
	require.Contains(t, dot, "digraph workflow {\n  rankdir=TB;\n")
	require.Contains(t, dot, `  "ok" [label="ok\necho ship", shape=diamond];`)
	require.Contains(t, dot, `  "fetch" [label="fetch\ncurl \"a&b\" | jq", shape=box];`)
	require.Contains(t, dot, `  "fetch" -> "ok" [label="stdin", style=dashed];`)

	ascii, err := flows.Graph(wf, "ascii", args)
	require.NoError(t, err)
	require.Contains(t, ascii, "Workflow Graph\n\nNodes:\n  [run] fetch: curl \"a&b\" | jq\n")
	require.Contains(t, ascii, "  [for_each] loop.x: $fetch.json.items\n")
	require.Contains(t, ascii, "\nEdges:\n  fetch -> p (next)\n")

	_, err = flows.Graph(wf, "svg", args)
	require.EqualError(t, err, "graph format must be one of: mermaid, dot, ascii")
}
