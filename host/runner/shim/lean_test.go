package shim_test

import (
	"os"
	"os/exec"
	"path/filepath"
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

// The shim's own package initialisation allocates nothing: each task
// pays for it before main. hash/crc32's Castagnoli tables, which it used
// to build there, cost a twentieth of a whole shim run.
func TestShimInitAllocatesNothing(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "flowgate-shim")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/flowgate/flowgate/cli/flowgate-shim").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	cmd := exec.Command(bin) // no arguments: it prints its usage and exits 2
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, _ = cmd.CombinedOutput()
	var line string
	for l := range strings.Lines(string(out)) {
		if strings.HasPrefix(l, "init github.com/flowgate/flowgate/host/runner/shim ") {
			line = l
		}
	}
	require.NotEmpty(t, line, "no init trace of the shim package in:\n%s", out)
	require.Contains(t, line, " 0 bytes, 0 allocs", "the shim package's init allocates: %s", line)
}
