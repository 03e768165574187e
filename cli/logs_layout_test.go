package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/runner/shim"
)

// A home an older gateway wrote keeps a first attempt's files in
// logs/<task>/1/, where this version keeps them in logs/<task>/:
// `tasks logs` reads them from either place.
func TestTasksLogsReadsTheOlderLayout(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, _, errOut := run(t, home, "tasks", "run", "--", "sh", "-c", "echo out; echo err >&2")
	require.Equal(t, 0, code, errOut)
	code, out, _ := run(t, home, "tasks", "list", "--json")
	require.Equal(t, 0, code)
	var l struct{ Tasks []apitype.Task }
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Tasks, 1)
	id := l.Tasks[0].ID

	taskDir := filepath.Join(home, "logs", id)
	older := filepath.Join(taskDir, "1")
	require.NoError(t, os.Mkdir(older, 0o700))
	for _, name := range []string{shim.RecordFile, shim.StdoutFile, shim.StderrFile} {
		require.NoError(t, os.Rename(filepath.Join(taskDir, name), filepath.Join(older, name)))
	}
	code, out, errOut = run(t, home, "tasks", "logs", id)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "out\n", out)
	code, out, errOut = run(t, home, "tasks", "logs", "--stderr", id)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "err\n", out)
}
