package runner_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner"
)

// TestReadProgressStopsAfterASessionLine: a session id is recorded in a
// write of its own, before any line after it is acted on, so a task
// killed right after reporting it cannot lose it to a later line's fate.
func TestReadProgressStopsAfterASessionLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "progress.jsonl")
	first := `{"phase":"start"}` + "\n"
	session := `{"session_id":" s-1 ","context_tokens":4096}` + "\n"
	rest := `{"milestone":"m"}` + "\n" + `{"context_tokens":-1}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(first+session+rest), 0o600))

	in, err := runner.ReadProgress(path, 0)
	require.NoError(t, err)
	require.Equal(t, int64(len(first+session)), in.To)
	require.Equal(t, &engine.SessionReport{ID: "s-1", ContextTokens: 4096}, in.Session)
	require.Equal(t, "start", in.Progress.Phase)
	require.Empty(t, in.Milestones)

	in, err = runner.ReadProgress(path, in.To)
	require.NoError(t, err)
	require.Nil(t, in.Session)
	require.Len(t, in.Milestones, 1)
	require.Equal(t, 1, in.Malformed, "a negative context size")
	require.Equal(t, int64(len(first+session+rest)), in.To)
}
