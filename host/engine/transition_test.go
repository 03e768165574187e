package engine_test

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// diagramEdges reads the mermaid block under a "## heading" of the state
// machine doc and returns its moves as "from->to", leaving out [*].
func diagramEdges(t *testing.T, doc, heading string) []string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## "+heading+"\n")
	require.True(t, ok, "docs/state-machine.md has no section %q", heading)
	_, block, ok := strings.Cut(section, "```mermaid\n")
	require.True(t, ok, "section %q has no mermaid block", heading)
	block, _, _ = strings.Cut(block, "```")
	edge := regexp.MustCompile(`^\s*(\S+)\s*-->\s*(\S+)\s*$`)
	var out []string
	for _, line := range strings.Split(block, "\n") {
		m := edge.FindStringSubmatch(line)
		if m == nil || m[1] == "[*]" || m[2] == "[*]" {
			continue
		}
		out = append(out, m[1]+"->"+m[2])
	}
	sort.Strings(out)
	return out
}

func TestStateMachineDocMatchesCode(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/state-machine.md")
	require.NoError(t, err)
	doc := string(b)

	var flows []string
	for _, from := range sdk.FlowStatuses() {
		for _, to := range engine.FlowMoves(from) {
			flows = append(flows, string(from)+"->"+string(to))
		}
		require.Equal(t, from.Terminal(), len(engine.FlowMoves(from)) == 0, "terminal flow status %s has no moves", from)
	}
	sort.Strings(flows)
	require.Equal(t, flows, diagramEdges(t, doc, "Flow"))

	var tasks []string
	for _, from := range sdk.TaskStatuses() {
		for _, to := range engine.TaskMoves(from) {
			tasks = append(tasks, string(from)+"->"+string(to))
		}
		require.Equal(t, from.Terminal(), len(engine.TaskMoves(from)) == 0, "terminal task status %s has no moves", from)
	}
	sort.Strings(tasks)
	require.Equal(t, tasks, diagramEdges(t, doc, "Task"))
}
