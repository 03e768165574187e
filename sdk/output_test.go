package sdk_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// ReadValue returns the value the record holds, or reads the kept file
// back, and refuses a file that is gone or changed.
func TestOutputReadsTheOutputFile(t *testing.T) {
	t.Parallel()
	out, err := (&sdk.Output{Value: json.RawMessage(`[1,2]`)}).ReadValue(nil)
	require.NoError(t, err)
	require.JSONEq(t, `[1,2]`, string(out))
	var none *sdk.Output
	out, err = none.ReadValue(nil)
	require.NoError(t, err)
	require.Nil(t, out, "no output")

	path := filepath.Join(t.TempDir(), "out.json")
	body := []byte(`["big"]`)
	require.NoError(t, os.WriteFile(path, body, 0o600))
	sum := sha256.Sum256(body)
	o := &sdk.Output{File: &sdk.OutputFile{Path: path, SHA256: hex.EncodeToString(sum[:])}}
	out, err = o.ReadValue(nil)
	require.NoError(t, err)
	require.JSONEq(t, `["big"]`, string(out))

	require.NoError(t, os.WriteFile(path, []byte(`["bad"]`), 0o600))
	_, err = o.ReadValue(nil)
	require.ErrorContains(t, err, "changed since the flow ended; run the flow again")
	require.NoError(t, os.Remove(path))
	_, err = o.ReadValue(nil)
	require.ErrorContains(t, err, "cannot be read")
}

// A kept value is read through the reader it is given and checked
// against its digest; without a reader it says where to read it. Text
// kept so is a JSON string.
func TestOutputReadsAKeptValue(t *testing.T) {
	t.Parallel()
	body := []byte(`"a table"`)
	s := sha256.Sum256(body)
	sum := hex.EncodeToString(s[:])
	kept := map[string][]byte{sum: body}
	read := func(sum string) ([]byte, error) {
		if b, ok := kept[sum]; ok {
			return b, nil
		}
		return nil, os.ErrNotExist
	}
	o := &sdk.Output{Value: json.RawMessage(`[]`), TextFile: &sdk.OutputFile{SHA256: sum, Kept: true}}
	text, err := o.ReadText(read)
	require.NoError(t, err)
	require.Equal(t, "a table", text)

	_, err = o.ReadText(nil)
	require.ErrorContains(t, err, "GET /v1/flows/<flow id>/kept/"+sum)
	kept[sum] = []byte(`"another"`)
	_, err = o.ReadText(read)
	require.ErrorContains(t, err, "changed since the flow ended")
	delete(kept, sum)
	_, err = o.ReadText(read)
	require.ErrorContains(t, err, "cannot be read")
}
