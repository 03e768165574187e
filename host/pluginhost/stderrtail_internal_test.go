package pluginhost

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tail keeps the last StderrLines lines, however the writes split
// them, and clips a line that never ends.
func TestStderrTailKeepsTheLastLines(t *testing.T) {
	t.Parallel()
	var tail stderrTail
	for i := range StderrLines + 5 {
		_, _ = tail.Write([]byte(fmt.Sprintf("line %d", i)))
		_, _ = tail.Write([]byte("\n"))
	}
	lines := tail.Lines()
	require.Len(t, lines, StderrLines)
	require.Equal(t, "line 5", lines[0])
	require.Equal(t, fmt.Sprintf("line %d", StderrLines+4), lines[StderrLines-1])

	_, _ = tail.Write([]byte(strings.Repeat("x", 3*maxStderrLine)))
	_, _ = tail.Write([]byte(strings.Repeat("y", maxStderrLine) + "\nlast"))
	lines = tail.Lines()
	require.Len(t, lines, StderrLines)
	require.Equal(t, strings.Repeat("x", maxStderrLine), lines[StderrLines-2])
	require.Equal(t, "last", lines[StderrLines-1], "an unfinished line is shown too")
}
