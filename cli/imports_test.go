package cli_test

import (
	"go/build"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is the import path of the flowgate module.
const module = "github.com/flowgate/flowgate"

// reach is what package cli may import of the module outside cli/ (its
// own subpackages, such as cli/pluginnew's plugin scaffolding, are the
// command line itself): the API (its client, its words), the gateway
// (which wires everything else, online and offline), the bench (which
// starts gateways of its own to measure them, so the gateway cannot
// front it without an import cycle), the sdk, and the first-party
// plugins and workflow language it hands to the gateway. At most 8.
var reach = []string{
	"host/api", "host/api/apitype", "host/gateway", "host/bench",
	"sdk", "plugins", "plugins/pipeline", "flows",
}

// Package cli reaches the system only through api and gateway: it parses
// flags, calls, and prints. Starting parts, opening stores and knowing
// their layouts is the gateway's (host/gateway), and the words the calls
// take and return are the API's (host/api, host/api/apitype). Only the
// package's own files are read: tests may reach further.
func TestCLIImportsOnlyAPIAndGateway(t *testing.T) {
	t.Parallel()
	require.LessOrEqual(t, len(reach), 8, "cli's reach into the module is at most 8 packages")
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	var internal []string
	for _, imp := range pkg.Imports {
		if rel, ok := strings.CutPrefix(imp, module+"/"); ok && !strings.HasPrefix(rel, "cli/") {
			internal = append(internal, rel)
		}
	}
	require.NotEmpty(t, internal, "the walk found cli's imports")
	for _, rel := range internal {
		if slices.Contains(reach, rel) {
			continue
		}
		t.Errorf("package cli imports %s: cli reaches the system only through %s; put the wiring (starting parts, opening stores, file layouts) behind host/gateway (a function in a new file there, as offline.go does) and the words a call takes or returns in host/api or host/api/apitype", rel, strings.Join(reach, ", "))
	}
}
