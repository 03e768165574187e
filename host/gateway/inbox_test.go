package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// The inbox example, a real plugin process, makes one flow per file
// dropped in its directory; each flow counts its file's bytes with one
// task, succeeds, and the file moves to done/.
func TestInboxExampleMakesAFlowPerFile(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "inbox")
	out, err := exec.Command("go", "build", "-o", bin, "../../examples/controllers/inbox").CombinedOutput()
	require.NoError(t, err, "%s", out)
	dir := t.TempDir()
	_, c := startTestGateway(t, 10, pluginhost.Spec{Name: "inbox", Path: bin,
		Env: map[string]string{"INBOX_DIR": dir, "INBOX_POLL": "20ms", "INBOX_OWNER": "me"}})

	const files = 5
	for i := range files {
		name := fmt.Sprintf("file-%d.txt", i)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "."+name), []byte(fmt.Sprintf("%0*d", i+1, 0)), 0o600))
		require.NoError(t, os.Rename(filepath.Join(dir, "."+name), filepath.Join(dir, name)))
	}
	polltest.Until(t, "every file to move to done/", func() bool {
		done, _ := os.ReadDir(filepath.Join(dir, "done"))
		return len(done) == files
	})

	page, err := c.ViewFlows(context.Background(), apitype.FlowFilter{ControllerID: "inbox"})
	require.NoError(t, err)
	require.Len(t, page.Flows, files)
	for _, f := range page.Flows {
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		var st struct{ Name, Count string }
		require.NoError(t, json.Unmarshal(f.State, &st))
		var n int
		_, err := fmt.Sscanf(st.Name, "file-%d.txt", &n)
		require.NoError(t, err)
		require.Equal(t, st.Name, f.Labels["inbox.file"])
		require.Equal(t, fmt.Sprintf("%d %s", n+1, filepath.Join(dir, st.Name)), st.Count, "the task counted the file's bytes")
		require.Equal(t, "me", f.OwnerKey)
	}
}
