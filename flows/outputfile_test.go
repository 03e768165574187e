package flows_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// StateOutput returns the inline output, or reads the output file back,
// and refuses a file that is gone or changed.
func TestStateOutputReadsTheOutputFile(t *testing.T) {
	t.Parallel()
	out, err := flows.StateOutput(json.RawMessage(`{"output":[1,2]}`))
	require.NoError(t, err)
	require.JSONEq(t, `[1,2]`, string(out))
	out, err = flows.StateOutput(json.RawMessage(`{"file":"x"}`))
	require.NoError(t, err)
	require.Nil(t, out, "no output yet")

	path := filepath.Join(t.TempDir(), "out.json")
	body := []byte(`["big"]`)
	require.NoError(t, os.WriteFile(path, body, 0o600))
	sum := sha256.Sum256(body)
	state, err := json.Marshal(map[string]any{"output_file": flows.OutputFile{Path: path, SHA256: hex.EncodeToString(sum[:])}})
	require.NoError(t, err)
	out, err = flows.StateOutput(state)
	require.NoError(t, err)
	require.JSONEq(t, `["big"]`, string(out))

	require.NoError(t, os.WriteFile(path, []byte(`["bad"]`), 0o600))
	_, err = flows.StateOutput(state)
	require.ErrorContains(t, err, "changed since the flow ended; run the pipeline again")
	require.NoError(t, os.Remove(path))
	_, err = flows.StateOutput(state)
	require.ErrorContains(t, err, "cannot be read")
}
