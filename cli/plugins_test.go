package cli_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/plugins"
)

// pluginWrapper writes an executable script in dir that runs this test
// binary as the first-party pipeline plugin: a real plugin process at a
// path of its own, which reports the name "pipeline".
func pluginWrapper(t *testing.T, dir, file string) string {
	t.Helper()
	path := filepath.Join(dir, file)
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\nexec "+os.Args[0]+" plugin serve pipeline\n"), 0o700))
	return path
}

// writeConfig writes a gateway config file in dir and returns its path.
func writeConfig(t *testing.T, dir, yaml string) string {
	t.Helper()
	path := filepath.Join(dir, "gateway.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	return path
}

// sha256Of is the hex SHA-256 of the file at path.
func sha256Of(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Each plugin config mistake stops flowgate gateway at start with exit 2
// (invalid input) and a message that names the config key; nothing is
// left serving.
func TestGatewayStopsOnPluginConfigMistakes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plugin := pluginWrapper(t, dir, "pipeline-plugin")
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644))
	good := "plugins:\n  - name: pipeline\n    path: " + plugin + "\n    sha256: " + sha256Of(t, plugin) + "\n"
	cases := map[string]struct{ yaml, want string }{
		"missing path":   {good + "  - name: hello\n    path: " + filepath.Join(dir, "nope") + "\n", "plugins[1].path: " + filepath.Join(dir, "nope") + ` does not exist (plugin "hello")`},
		"not executable": {good + "  - name: hello\n    path: " + plain + "\n", "plugins[1].path: " + plain + ` is not executable (plugin "hello") (mode -rw-r--r--); chmod +x it`},
		"wrong sha256":   {good + "  - name: hello\n    path: " + plugin + "\n    sha256: " + strings.Repeat("ab", 32) + "\n", "plugins[1].sha256: " + plugin + " has the sha256 " + sha256Of(t, plugin) + ", not the configured " + strings.Repeat("ab", 32)},
		"other name":     {good + "  - name: hello\n    path: " + plugin + "\n", `plugins[1].name: the config names the plugin "hello", but the executable ` + plugin + ` reports the name "pipeline"`},
		"no name":        {good + "  - path: " + plugin + "\n", "plugins[1].name: is required"},
		"missing dir":    {good + "plugins_dir: " + filepath.Join(dir, "nodir") + "\n", "plugins_dir: the plugin directory " + filepath.Join(dir, "nodir") + " does not exist"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home := shortHome(t)
			code, _, errOut := run(t, home, "gateway", "--config", writeConfig(t, t.TempDir(), tc.yaml))
			require.Equal(t, 2, code, errOut)
			require.Contains(t, errOut, tc.want)
			_, err := os.Stat(gateway.SocketPath(home))
			require.ErrorIs(t, err, os.ErrNotExist, "no gateway is left serving")
		})
	}
}

// checkOutput is the JSON of plugins check.
type checkOutput struct {
	OK      bool                     `json:"ok"`
	Plugins []pluginhost.CheckResult `json:"plugins"`
}

// plugins check reports every entry and every plugins_dir file, starting
// each plugin briefly: exit 1 when an entry would stop a gateway, 0 when
// none would (skipped plugins_dir files are listed, not fatal), 2 for a
// config file that does not load.
func TestPluginsCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plugin := pluginWrapper(t, dir, "pipeline-plugin")
	pdir := filepath.Join(dir, "plugins")
	require.NoError(t, os.Mkdir(pdir, 0o700))
	pluginWrapper(t, pdir, "also-pipeline")
	require.NoError(t, os.WriteFile(filepath.Join(pdir, "README"), []byte("plugins go here\n"), 0o644))
	home := shortHome(t)

	bad := writeConfig(t, t.TempDir(), "plugins:\n  - name: pipeline\n    path: "+plugin+"\n"+
		"  - name: gone\n    path: "+filepath.Join(dir, "nope")+"\n"+
		"  - name: hello\n    path: "+plugin+"\n"+
		"  - name: pinned\n    path: "+plugin+"\n    sha256: "+strings.Repeat("0", 64)+"\n"+
		"plugins_dir: "+pdir+"\n")
	code, out, errOut := run(t, home, "plugins", "check", "--config", bad, "--json")
	require.Equal(t, 1, code, errOut)
	var got checkOutput
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.False(t, got.OK)
	require.Len(t, got.Plugins, 6, out)
	want := []struct{ key, outcome, err string }{
		{"plugins[0]", pluginhost.CheckOK, ""},
		{"plugins[1]", pluginhost.CheckError, "plugins[1].path: " + filepath.Join(dir, "nope") + " does not exist"},
		{"plugins[2]", pluginhost.CheckError, `plugins[2].name: the config names the plugin "hello", but the executable ` + plugin + ` reports the name "pipeline"`},
		{"plugins[3]", pluginhost.CheckError, "plugins[3].sha256: " + plugin + " has the sha256 "},
		{"plugins_dir", pluginhost.CheckSkipped, "plugins_dir: " + filepath.Join(pdir, "README") + " is not executable (mode -rw-r--r--)"},
		{"plugins_dir", pluginhost.CheckSkipped, `its name "pipeline" is taken by another plugin`},
	}
	for i, w := range want {
		r := got.Plugins[i]
		require.Equal(t, w.key, r.Key, "entry %d", i)
		require.Equal(t, w.outcome, r.Outcome, "entry %d: %s", i, r.Error)
		require.Contains(t, r.Error, w.err, "entry %d", i)
	}

	code, out, errOut = run(t, home, "plugins", "check", "--config", bad)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, out, "Plugins: 6 checked, 3 would stop the gateway, 2 skipped.")
	require.Contains(t, out, "error: plugins[1].path: ")

	ok := writeConfig(t, t.TempDir(), "plugins_dir: "+pdir+"\n")
	code, out, errOut = run(t, home, "plugins", "check", "--config", ok, "--json")
	require.Equal(t, 0, code, errOut)
	got = checkOutput{}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.True(t, got.OK)
	require.Len(t, got.Plugins, 2, out)
	require.Equal(t, pluginhost.CheckSkipped, got.Plugins[1].Outcome)
	require.Equal(t, pluginhost.CheckResult{Key: "plugins_dir", Name: "pipeline", Path: filepath.Join(pdir, "also-pipeline"), Version: got.Plugins[0].Version, Outcome: pluginhost.CheckOK}, got.Plugins[0])
	require.NotEmpty(t, got.Plugins[0].Version)

	code, _, errOut = run(t, home, "plugins", "check", "--config", writeConfig(t, t.TempDir(), "plugins:\n  - name: x\n    sha256: 12\n"))
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "plugins[0].sha256: want 64 hex digits")
}

// plugins reload restarts one plugin of the running gateway through its
// socket; an unknown name lists the configured ones; with no gateway it
// says so.
func TestPluginsReload(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, _, errOut := run(t, home, "plugins", "reload", "pipeline")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "no gateway is running")

	serveGateway(t, gateway.Config{Home: home, Owner: t.Name(), Builtins: plugins.Names()})
	code, out, errOut := run(t, home, "plugins", "reload", "pipeline", "--json")
	require.Equal(t, 0, code, errOut)
	var first api.PluginStatus
	require.NoError(t, json.Unmarshal([]byte(out), &first), out)
	require.Equal(t, api.PluginRunning, first.State)
	require.Positive(t, first.PID)

	code, out, errOut = run(t, home, "plugins", "reload", "pipeline")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Reloaded plugin pipeline: running, pid ")
	require.NotContains(t, out, fmt.Sprintf("pid %d,", first.PID), "a new process")

	code, _, errOut = run(t, home, "plugins", "reload", "pipelin")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, `no plugin named "pipelin" is configured in this gateway (it has pipeline)`)
}

// plugins new refuses a language it has no template for, and a folder
// that holds files, with exit 2 and what to do; a good one names the
// next steps.
func TestPluginsNewRefusesBadInput(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	dir := t.TempDir()
	code, _, errOut := run(t, home, "plugins", "new", "x", "--lang", "rust", "--dir", filepath.Join(dir, "x"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `no template for language "rust": use --lang with one of go, python, ts`)
	code, out, errOut := run(t, home, "plugins", "new", "x", "--lang", "python", "--dir", filepath.Join(dir, "x"))
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Next: flowgate plugins test "+filepath.Join(dir, "x", "plugin"))
	code, _, errOut = run(t, home, "plugins", "new", "x", "--dir", filepath.Join(dir, "x"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "is not empty: give a new folder with --dir, or another name")
}
