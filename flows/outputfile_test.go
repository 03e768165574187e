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
	out, err := flows.StateOutput(json.RawMessage(`{"output":[1,2]}`), nil)
	require.NoError(t, err)
	require.JSONEq(t, `[1,2]`, string(out))
	out, err = flows.StateOutput(json.RawMessage(`{"file":"x"}`), nil)
	require.NoError(t, err)
	require.Nil(t, out, "no output yet")

	path := filepath.Join(t.TempDir(), "out.json")
	body := []byte(`["big"]`)
	require.NoError(t, os.WriteFile(path, body, 0o600))
	sum := sha256.Sum256(body)
	state, err := json.Marshal(map[string]any{"output_file": flows.OutputFile{Path: path, SHA256: hex.EncodeToString(sum[:])}})
	require.NoError(t, err)
	out, err = flows.StateOutput(state, nil)
	require.NoError(t, err)
	require.JSONEq(t, `["big"]`, string(out))

	require.NoError(t, os.WriteFile(path, []byte(`["bad"]`), 0o600))
	_, err = flows.StateOutput(state, nil)
	require.ErrorContains(t, err, "changed since the flow ended; run the pipeline again")
	require.NoError(t, os.Remove(path))
	_, err = flows.StateOutput(state, nil)
	require.ErrorContains(t, err, "cannot be read")
}

// A kept output is read through the reader it is given and checked
// against its digest; without a reader it says where to read it.
func TestStateOutputReadsAKeptOutput(t *testing.T) {
	t.Parallel()
	body := []byte(`["big"]`)
	s := sha256.Sum256(body)
	sum := hex.EncodeToString(s[:])
	state, err := json.Marshal(map[string]any{"output_file": flows.OutputFile{SHA256: sum, Kept: true}})
	require.NoError(t, err)
	kept := map[string][]byte{sum: body}
	read := func(sum string) ([]byte, error) {
		if b, ok := kept[sum]; ok {
			return b, nil
		}
		return nil, os.ErrNotExist
	}
	out, err := flows.StateOutput(state, read)
	require.NoError(t, err)
	require.JSONEq(t, `["big"]`, string(out))

	_, err = flows.StateOutput(state, nil)
	require.ErrorContains(t, err, "GET /v1/flows/<flow id>/kept/"+sum)
	kept[sum] = []byte(`["bad"]`)
	_, err = flows.StateOutput(state, read)
	require.ErrorContains(t, err, "changed since the flow ended; run the pipeline again")
	delete(kept, sum)
	_, err = flows.StateOutput(state, read)
	require.ErrorContains(t, err, "cannot be read")
}
