package shim_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// leanDeps are the only packages outside the standard library the shim
// may link: every task starts one shim, and Go runs the initialisation
// of every package a binary links before main (gRPC's alone costs a task
// more CPU than /bin/true does).
var leanDeps = map[string]bool{
	"golang.org/x/sys/unix":                         true,
	"github.com/flowgate/flowgate/sdk/duration":     true,
	"github.com/flowgate/flowgate/host/runner/shim": true,
}

func TestShimLinksOnlyTheStandardLibrary(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/flowgate/flowgate/cli/flowgate-shim").CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/flowgate/flowgate/cli/flowgate-shim" && !leanDeps[p] {
			t.Errorf("flowgate-shim links %s: keep host/runner/shim to the standard library, x/sys/unix and sdk/duration, so a task does not pay for its initialisation", p)
		}
	}
}
