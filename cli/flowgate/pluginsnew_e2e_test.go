package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/plugintest/exampletest"
)

// TestPluginsNewPassesPluginsTest writes a plugin in each language with
// the real binary's `plugins new`, sets it up as its README says (Go:
// a replace to this checkout's sdk; TypeScript: npm ci, offline from the cache
// the example's npm ci filled), and checks it with `plugins test`,
// unchanged.
func TestPluginsNewPassesPluginsTest(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	for _, c := range []struct {
		lang  string
		setUp func(t *testing.T, dir string)
	}{
		{"go", buildGoPlugin},
		{"python", func(t *testing.T, dir string) { exampletest.Require(t, dir) }},
		{"ts", installTSPlugin},
	} {
		t.Run(c.lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "x")
			out, err := exec.Command(bin, "plugins", "new", "x", "--lang", c.lang, "--dir", dir).CombinedOutput()
			require.NoError(t, err, "plugins new: %s", out)
			require.Contains(t, string(out), "Next:")
			c.setUp(t, dir)
			out, err = exec.Command(bin, "plugins", "test", filepath.Join(dir, "plugin")).CombinedOutput()
			require.NoError(t, err, "plugins test: %s", out)
			require.Contains(t, string(out), "Plugin: x ")
		})
	}
}

// buildGoPlugin points the new Go plugin's module at this checkout's sdk,
// with the sdk's go.sum (no download), and builds dir/plugin.
func buildGoPlugin(t *testing.T, dir string) {
	t.Helper()
	sdk, err := filepath.Abs("../../sdk")
	require.NoError(t, err)
	sum, err := os.ReadFile(filepath.Join(sdk, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o600))
	for _, args := range [][]string{{"mod", "edit", "-replace", "github.com/flowgate/flowgate/sdk=" + sdk}, {"build", "-o", "plugin", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %v in the new plugin: %s", args, out)
	}
}

// installTSPlugin runs npm ci in the new TypeScript plugin, offline: its
// lock file is the example's, whose npm ci (in CI, .ci/run) filled the
// cache. npm ci also compiles src/ to dist/.
func installTSPlugin(t *testing.T, dir string) {
	t.Helper()
	exampletest.Require(t, "../../examples/controllers/two-step-ts")
	cmd := exec.Command("npm", "ci", "--offline", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm ci in the new plugin: %s", out)
	exampletest.Require(t, dir)
}
