package flows_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// A multi-line run: keeps its lines in every graph format, so it reads as
// the several commands it is, not as one long command; a very long block
// shows its first lines and counts the rest.
func TestGraphKeepsTheLinesOfAMultiLineRun(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := range 12 {
		fmt.Fprintf(&long, "      echo line %d\n", i)
	}
	wf, err := flows.Parse("g.yaml", []byte(`
steps:
  - id: build
    run: |
      set -e

      make   all
      make test
  - id: many
    run: |
`+long.String()))
	require.NoError(t, err)
	args := flows.ResolveArgs(wf, nil)

	nodes, _ := flows.GraphModel(wf, args)
	require.Equal(t, "set -e\nmake all\nmake test", nodes[0].Detail)
	require.Equal(t, "echo line 0\necho line 1\necho line 2\necho line 3\necho line 4\necho line 5\necho line 6\n… (5 more lines)", nodes[1].Detail)

	mermaid, err := flows.Graph(wf, "mermaid", args)
	require.NoError(t, err)
	require.Contains(t, mermaid, `  n_build["build<br/>set -e<br/>make all<br/>make test"]`+"\n")

	dot, err := flows.Graph(wf, "dot", args)
	require.NoError(t, err)
	require.Contains(t, dot, `  "build" [label="build\nset -e\nmake all\nmake test", shape=box];`)

	ascii, err := flows.Graph(wf, "ascii", args)
	require.NoError(t, err)
	require.Contains(t, ascii, "  [run] build: set -e\n"+
		"               make all\n"+
		"               make test\n")
}
