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

// reach is what package cli may import of the module: the API (its
// client, its words), the gateway (which wires everything else, online
// and offline), the sdk, the first-party plugins and workflow language it
// hands to the gateway, and its own plugin scaffolding. At most 8.
var reach = []string{
	"host/api", "host/api/apitype", "host/gateway", "sdk",
	"plugins", "plugins/pipeline", "flows", "cli/pluginnew",
}

// exceptions are imports outside reach that cannot go behind the gateway
// yet, each with why.
var exceptions = map[string]string{
	// host/bench starts gateways of its own to measure them, so it imports
	// host/gateway, and the gateway cannot front it without a cycle.
	"host/bench": "it imports host/gateway",
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
		if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
			internal = append(internal, rel)
		}
	}
	require.NotEmpty(t, internal, "the walk found cli's imports")
	for _, rel := range internal {
		if slices.Contains(reach, rel) {
			continue
		}
		if _, ok := exceptions[rel]; ok {
			continue
		}
		t.Errorf("package cli imports %s: cli reaches the system only through %s; put the wiring (starting parts, opening stores, file layouts) behind host/gateway (a function in a new file there, as offline.go does) and the words a call takes or returns in host/api or host/api/apitype", rel, strings.Join(reach, ", "))
	}
}
