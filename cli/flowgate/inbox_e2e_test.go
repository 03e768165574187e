package main_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// The inbox example under the real gateway binary gives each file exactly
// one flow while the gateway and the plugin are SIGKILLed twenty times,
// at random, as 24 files are dropped: every file ends in done/, and the
// inbox's flows are one per file, keyed by its name and digest, each
// succeeded.
func TestInboxSurvivesSIGKILLs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	inbox := filepath.Join(t.TempDir(), "inbox")
	out, err := exec.Command("go", "build", "-o", inbox, "../../examples/controllers/inbox").CombinedOutput()
	require.NoError(t, err, "%s", out)
	home, work, logf := e2eDirs(t)
	dir := filepath.Join(work, "inbox")
	require.NoError(t, os.Mkdir(dir, 0o755))
	cfg := filepath.Join(work, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("plugins:\n  - name: inbox\n    path: "+inbox+
		"\n    env:\n      INBOX_DIR: "+dir+"\n      INBOX_POLL: 30ms\n      INBOX_OWNER: e2e\n"), 0o600))

	g := startGateway(t, bin, home, logf, "--config", cfg)
	defer func() { g.reap() }()
	const files, kills = 24, 20
	keys := map[string]string{} // file name → the key its flow must have
	drop := func(i int) {
		name := fmt.Sprintf("file-%02d.txt", i)
		body := []byte(fmt.Sprintf("file %d: %s\n", i, time.Now()))
		sum := sha256.Sum256(body)
		keys[name] = name + ":" + hex.EncodeToString(sum[:])
		require.NoError(t, os.WriteFile(filepath.Join(dir, "."+name), body, 0o600))
		require.NoError(t, os.Rename(filepath.Join(dir, "."+name), filepath.Join(dir, name)))
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 28))
	// pluginKills counts the plugin's kills since the gateway's: more
	// than the plugin's restart budget (10) in a row would leave it failed.
	dropped, killed, pluginKills := 0, 0, 0
	for kill := range kills {
		for ; dropped < (kill+1)*files/kills; dropped++ {
			drop(dropped)
		}
		// A random moment: the files just dropped are being scanned,
		// created, run or moved.
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		if rng.IntN(2) == 0 || pluginKills == 5 {
			g.kill(t)
			g = startGateway(t, bin, home, logf, "--config", cfg)
			pluginKills = 0
			continue
		}
		pluginKills++
		killed = runningPluginPID(t, home, "inbox", killed)
		require.NoError(t, syscall.Kill(killed, syscall.SIGKILL))
	}
	for ; dropped < files; dropped++ {
		drop(dropped)
	}

	polltest.Until(t, "", func() (bool, string) {
		done, _ := os.ReadDir(filepath.Join(dir, "done"))
		return len(done) == files, fmt.Sprintf("%d of %d files are in done/", len(done), files)
	}, polltest.Within(120*time.Second), polltest.Every(50*time.Millisecond))
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	page, err := c.ViewFlows(context.Background(), apitype.FlowFilter{ControllerID: "inbox"})
	require.NoError(t, err)
	byFile := map[string]apitype.FlowView{}
	for _, v := range page.Flows {
		name := v.Labels["inbox.file"]
		if prev, dup := byFile[name]; dup {
			t.Fatalf("file %s has two flows, %s and %s", name, prev.ID, v.ID)
		}
		byFile[name] = v
	}
	require.Len(t, byFile, files)
	for name, key := range keys {
		v := byFile[name]
		require.Equal(t, key, v.IdempotencyKey, name)
		require.Equal(t, sdk.FlowSucceeded, v.Status, "%s: %s", name, v.BlockedSummary)
	}
}

// runningPluginPID waits for plugin name of the gateway on home to be
// running in a process other than old (one killed, whose exit the gateway
// may not have seen yet), and returns its process id.
func runningPluginPID(t *testing.T, home, name string, old int) int {
	t.Helper()
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	pid := 0
	polltest.Until(t, "", func() (bool, string) {
		ps, err := c.Plugins(context.Background())
		require.NoError(t, err)
		for _, p := range ps {
			if p.Name == name && p.State == apitype.PluginRunning && p.PID > 0 && p.PID != old {
				pid = p.PID
				return true, ""
			}
		}
		return false, fmt.Sprintf("plugin %s is not running: %+v", name, ps)
	}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
	return pid
}
