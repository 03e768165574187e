package host_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sdkRequires are the modules the sdk module may require directly: the
// four libraries DESIGN.md lets package sdk import, and testify for its
// tests. A plugin author's module graph is what these list.
var sdkRequires = []string{
	"github.com/hashicorp/go-hclog",
	"github.com/hashicorp/go-plugin",
	"github.com/stretchr/testify",
	"google.golang.org/grpc",
	"google.golang.org/protobuf",
}

// maxSDKModules bounds `go list -m all` in sdk/, the graph a plugin
// author's go.mod pulls in (the gateway's is 136). It is not the 30 issue
// 32 aimed for: google.golang.org/grpc v1.85.0's go.mod lists 34 modules
// (mostly its xDS support, which the sdk never links), so a module that
// needs grpc alone has 40; go-hclog's go.mod predates module graph
// pruning, so testify's and fatih/color's graphs come with it, and grpc,
// hclog and go-plugin together are 55. An older grpc lists fewer
// (v1.66.3: 42 in all) but has HTTP/2 transport vulnerabilities fixed in
// v1.83 (GO-2026-6348, GO-2026-6443), and every plugin serves gRPC, so
// the sdk requires the gateway's grpc. Raising this number needs a
// reason as good.
const maxSDKModules = 56

// maxLinkedModules bounds the modules whose packages a plugin built on
// the sdk compiles and links: the sdk itself and the 14 it needs
// (go-plugin, grpc, protobuf, hclog and what they import). The rest of
// maxSDKModules are go.mod files the go command reads to select
// versions, never downloaded as source or built.
const maxLinkedModules = 15

// TestSDKIsASmallModule fails when sdk/ stops being a module of its own,
// requires a module beyond sdkRequires, or its module graph outgrows
// maxSDKModules: a plugin author imports the sdk, not the gateway.
func TestSDKIsASmallModule(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "sdk")
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	require.NoError(t, err, "sdk/go.mod: the sdk is a module of its own")

	var mod struct {
		Module  struct{ Path string }
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	require.NoError(t, json.Unmarshal(sdkGo(t, dir, "mod", "edit", "-json"), &mod))
	require.Equal(t, "github.com/flowgate/flowgate/sdk", mod.Module.Path)
	for _, r := range mod.Require {
		if !r.Indirect && !slices.Contains(sdkRequires, r.Path) {
			t.Errorf("sdk/go.mod requires %s: the sdk may import only the standard library, %s; keep what needs it out of sdk/", r.Path, strings.Join(sdkRequires, ", "))
		}
	}

	linked := map[string]bool{}
	for _, m := range strings.Fields(string(sdkGo(t, dir, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "./..."))) {
		linked[m] = true
	}
	require.LessOrEqual(t, len(linked), maxLinkedModules, "a plugin built on the sdk links packages of %d modules, more than %d: %v", len(linked), maxLinkedModules, slices.Sorted(maps.Keys(linked)))

	all := strings.Fields(string(sdkGo(t, dir, "list", "-m", "-f", "{{.Path}}", "all")))
	require.NotEmpty(t, all)
	require.LessOrEqual(t, len(all), maxSDKModules, "go list -m all in sdk/ prints %d modules, more than %d: a plugin author's graph grew; see maxSDKModules\n%s", len(all), maxSDKModules, strings.Join(all, "\n"))
}

// sdkGo runs the go command in the sdk module alone (GOWORK=off), as a
// plugin author's build sees it, and returns its standard output.
func sdkGo(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "go %s in sdk/: %s", strings.Join(args, " "), stderr)
	return out
}
