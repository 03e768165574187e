package pipeline

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// A loop that runs many state stages leaves many small outputs: past
// maxInlineStageOut their object is kept in a file, so the state stays
// small, and reading the state back gives every output.
func TestManyStageOutputsAreKeptInAFile(t *testing.T) {
	t.Parallel()
	fs := files{dir: t.TempDir(), flow: "f1"}
	s, err := readState([]byte(`{"pipeline":"state.get k"}`), fs, nil)
	require.NoError(t, err)
	s.StageOut = map[string][]any{}
	for i := range 40000 {
		s.StageOut[fmt.Sprintf("each/get/stage0:%d", i)] = []any{float64(i)}
	}
	b, _, err := s.encode()
	require.NoError(t, err)
	require.Less(t, len(b), 1<<10)
	back, err := readState(b, fs, nil)
	require.NoError(t, err)
	require.Len(t, back.StageOut, len(s.StageOut))
	for k, v := range s.StageOut {
		require.Equal(t, v, back.StageOut[k], k)
	}
}
