package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/stretchr/testify/require"
)

// nobody is the uid the tests hand a file to when it must be another
// user's.
const nobody = 65534

// markerScript is a shell script that creates marker when it runs, then
// prints an empty JSON array (what a stage prints for no items).
func markerScript(marker string) []byte {
	return []byte("#!/bin/sh\ntouch " + marker + "\necho '[]'\n")
}

// requireRootE2E skips a test that must chown files to another user.
func requireRootE2E(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file to another user (chown); run the tests as root to cover it")
	}
}

// TestStagesSomeoneElseControlsAreRefused runs pipelines through the
// real binary with executable stages another user owns, or that group or
// others can write, in the home's stages directory and in a stage_path
// directory: each is refused with the command that fixes it, and never
// runs; a stage the gateway's user controls runs.
func TestStagesSomeoneElseControlsAreRefused(t *testing.T) {
	t.Parallel()
	requireRootE2E(t)
	bin := buildFlowgate(t)
	home, work, _ := e2eDirs(t)
	stages, extra := filepath.Join(home, "stages"), filepath.Join(work, "extra")
	for _, d := range []string{stages, extra} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte("stage_path: ["+extra+"]\n"), 0o600))
	stage := func(dir, name string) (path, marker string) {
		path, marker = filepath.Join(dir, name), filepath.Join(work, name+".ran")
		require.NoError(t, os.WriteFile(path, markerScript(marker), 0o755))
		return path, marker
	}
	foreign, foreignRan := stage(stages, "foreign.stage")
	require.NoError(t, os.Chown(foreign, nobody, nobody))
	loose, looseRan := stage(stages, "loose.stage")
	require.NoError(t, os.Chmod(loose, 0o777))
	_, openRan := stage(extra, "open.stage")
	require.NoError(t, os.Chmod(extra, 0o777))
	_, okRan := stage(stages, "ok.stage")

	pipeline := func(name string) (string, error) {
		cmd := exec.Command(bin, "--home", home, "pipeline", "run", "--mode", "tool", `exec --json --shell "echo [1]" | `+name)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := pipeline("ok.stage")
	require.NoError(t, err, out)
	require.FileExists(t, okRan, "a stage the gateway's user controls runs")

	for _, c := range []struct{ name, ran, says string }{
		{"foreign.stage", foreignRan, foreign + " is owned by nobody (uid " + strconv.Itoa(nobody) + "), not by root"},
		{"foreign.stage", foreignRan, "chown 0 " + foreign},
		{"loose.stage", looseRan, "chmod go-w " + loose},
		{"open.stage", openRan, extra + " is writable by group or others (mode 0777)"},
		{"open.stage", openRan, "chmod go-w " + extra},
	} {
		out, err := pipeline(c.name)
		require.Error(t, err, "%s ran: %s", c.name, out)
		require.Contains(t, out, c.says, c.name)
		require.NoFileExists(t, c.ran, "%s must not run", c.name)
	}
}

// TestPluginsSomeoneElseControlsAreRefused starts the real gateway with a
// plugins entry whose executable another user owns, and with a plugins_dir
// group and others can write: each start is refused with the command that
// fixes it, and no plugin runs. A file others can write in a plugins_dir
// of its own is skipped, saying why, and does not run either.
func TestPluginsSomeoneElseControlsAreRefused(t *testing.T) {
	t.Parallel()
	requireRootE2E(t)
	bin := buildFlowgate(t)
	_, work, _ := e2eDirs(t)
	marker := filepath.Join(work, "plugin.ran")
	plugin := func(dir string, mode os.FileMode) string {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		path := filepath.Join(dir, "plugin")
		require.NoError(t, os.WriteFile(path, markerScript(marker), 0o755))
		require.NoError(t, os.Chmod(path, mode))
		return path
	}
	gatewayRefuses := func(config string, says ...string) {
		t.Helper()
		home, err := os.MkdirTemp("", "fge2e")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(home) })
		cfg := filepath.Join(home, "gateway.yaml")
		require.NoError(t, os.WriteFile(cfg, []byte(config), 0o600))
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, "gateway", "--home", home).CombinedOutput()
		require.Error(t, err, "the gateway started: %s", out)
		require.NoError(t, ctx.Err(), "the gateway ran instead of refusing: %s", out)
		for _, s := range says {
			require.Contains(t, string(out), s)
		}
		require.NoFileExists(t, marker, "the plugin must not run")
	}

	foreign := plugin(filepath.Join(work, "foreign"), 0o755)
	require.NoError(t, os.Chown(foreign, nobody, nobody))
	gatewayRefuses("plugins:\n  - name: foreign\n    path: "+foreign+"\n",
		"plugins[0].path: refused to run (plugin \"foreign\")", foreign+" is owned by nobody", "chown 0 "+foreign)

	loose := plugin(filepath.Join(work, "loose"), 0o757)
	gatewayRefuses("plugins:\n  - name: loose\n    path: "+loose+"\n", "chmod go-w "+loose)

	open := filepath.Join(work, "open")
	plugin(open, 0o755)
	require.NoError(t, os.Chmod(open, 0o777))
	gatewayRefuses("plugins_dir: "+open+"\n", "plugins_dir: refused to run the plugins in it", "chmod go-w "+open)

	// A plugins_dir of the gateway's own with one file others can write:
	// the gateway starts without it.
	dir := filepath.Join(work, "dir")
	writable := plugin(dir, 0o777)
	home, _, logf := e2eDirs(t)
	cfg := filepath.Join(home, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("plugins_dir: "+dir+"\n"), 0o600))
	g := startGateway(t, bin, home, logf)
	defer g.kill(t)
	polltest.Until(t, "the skipped file logged", func() bool {
		b, err := os.ReadFile(logf.Name())
		require.NoError(t, err)
		return strings.Contains(string(b), "chmod go-w "+writable)
	}, polltest.Within(20*time.Second), polltest.Every(50*time.Millisecond))
	require.NoFileExists(t, marker, "the plugin must not run")
}
