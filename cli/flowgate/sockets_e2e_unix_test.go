//go:build unix

package main_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/polltest"
)

// A gateway's plugin sockets live in TMPDIR/flowgate-UID/PID. A gateway
// killed with SIGKILL leaves its sockets there; the next gateway removes
// them when it launches its first plugin, and one stopped cleanly leaves
// no socket at all.
func TestKilledGatewaysSocketsAreSweptAtTheNextStart(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	tmp, err := os.MkdirTemp("", "fgtmp")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	cfg := filepath.Join(work, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("plugins:\n  - name: pipeline\n    isolate: true\n"), 0o600))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMPDIR="+tmp)
	base := filepath.Join(tmp, "flowgate-"+strconv.Itoa(os.Getuid()))

	// running waits for the isolated pipeline plugin and returns its pid.
	running := func() int {
		var pid int
		polltest.Until(t, "", func() (bool, string) {
			var list struct{ Plugins []apitype.PluginStatus }
			out := flowgate(t, bin, "--home", home, "plugins", "list", "--json")
			require.NoError(t, json.Unmarshal([]byte(out), &list), out)
			if len(list.Plugins) != 1 || list.Plugins[0].State != apitype.PluginRunning {
				return false, "the isolated pipeline plugin is not running: " + out
			}
			pid = list.Plugins[0].PID
			return true, ""
		}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
		t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
		return pid
	}

	g1 := startGatewayEnv(t, bin, home, logf, env, "--config", cfg)
	t.Cleanup(g1.reap)
	running()
	dir1 := filepath.Join(base, strconv.Itoa(g1.cmd.Process.Pid))
	socks := socketsUnder(t, tmp)
	require.GreaterOrEqual(t, len(socks), 2, "the plugin's socket and the Host's for it: %v", socks)
	for _, s := range socks {
		require.True(t, strings.HasPrefix(s, dir1+"/"), "socket %s is outside the gateway's directory %s", s, dir1)
	}
	g1.kill(t)
	require.NotEmpty(t, socketsUnder(t, dir1), "a SIGKILLed gateway leaves its sockets")

	g2 := startGatewayEnv(t, bin, home, logf, env, "--config", cfg)
	t.Cleanup(g2.reap)
	running()
	_, err = os.Stat(dir1)
	require.ErrorIs(t, err, fs.ErrNotExist, "the killed gateway's socket directory is swept at the next start")
	dir2 := filepath.Join(base, strconv.Itoa(g2.cmd.Process.Pid))
	for _, s := range socketsUnder(t, tmp) {
		require.True(t, strings.HasPrefix(s, dir2+"/"), "socket %s is outside the live gateway's directory %s", s, dir2)
	}

	g2.stop(t)
	require.Empty(t, socketsUnder(t, tmp), "a gateway stopped cleanly leaves no socket")
}

// socketsUnder lists the unix sockets under dir, sorted.
func socketsUnder(t *testing.T, dir string) []string {
	t.Helper()
	var socks []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSocket != 0 {
			socks = append(socks, path)
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(socks)
	return socks
}
