package flows_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// A workflow file over MaxFileBytes is refused before it is parsed, and
// a run: line over MaxRunBytes is refused at its position.
func TestSizeLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	big := filepath.Join(dir, "big.lobster")
	pad := "# " + strings.Repeat("x", 100) + "\n"
	body := "name: big\nsteps:\n  - id: a\n    run: echo hi\n" + strings.Repeat(pad, flows.MaxFileBytes/len(pad)+1)
	require.NoError(t, os.WriteFile(big, []byte(body), 0o600))
	_, err := flows.Load(big)
	require.ErrorContains(t, err, "workflow file is")
	require.ErrorContains(t, err, "at most 262144 are allowed")
	_, err = flows.Parse("big.lobster", []byte(body))
	require.ErrorContains(t, err, "at most 262144 are allowed")

	longRun := filepath.Join(dir, "long.lobster")
	body = "name: long\nsteps:\n  - id: a\n    run: echo hi\n  - id: b\n    run: echo " + strings.Repeat("y", flows.MaxRunBytes) + "\n"
	require.NoError(t, os.WriteFile(longRun, []byte(body), 0o600))
	_, err = flows.Load(longRun)
	require.ErrorContains(t, err, "steps[1].run")
	require.ErrorContains(t, err, "put the script in a file")
	require.ErrorContains(t, err, "long.lobster:5:")

	fits := filepath.Join(dir, "fits.lobster")
	body = "name: fits\nsteps:\n  - id: a\n    run: echo " + strings.Repeat("y", flows.MaxRunBytes-5) + "\n"
	require.NoError(t, os.WriteFile(fits, []byte(body), 0o600))
	_, err = flows.Load(fits)
	require.NoError(t, err)
}
