package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// A plugin's Host.CreateFlow survives SIGKILLs of the real gateway: the
// spawner plugin (testdata/spawner) creates one flow per parent, keyed by
// the parent, and holds each event unacknowledged for a while; the
// gateway is killed five times while creates are committed but their
// events not acknowledged, so after each restart the plugin asks again
// with the same key. Every answer for a parent names the same flow, at
// least one retry answered created=false, each parent has exactly one
// child, and every child's flow.started reached the plugin.
func TestCreateFlowSurvivesGatewaySIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	spawner := filepath.Join(t.TempDir(), "spawner")
	out, err := exec.Command("go", "build", "-o", spawner, "./testdata/spawner").CombinedOutput()
	require.NoError(t, err, "%s", out)
	home, work, logf := e2eDirs(t)
	ledger := filepath.Join(work, "ledger")
	cfg := filepath.Join(work, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("plugins:\n  - name: spawner\n    path: "+spawner+
		"\n    env:\n      SPAWNER_LEDGER: "+ledger+"\n      SPAWNER_HOLD: 400ms\n"), 0o600))

	ctx := context.Background()
	g := startGateway(t, bin, home, logf, "--config", cfg)
	defer func() { g.reap() }()
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	var parents []string
	for i := range 12 {
		f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: "spawner", Goal: fmt.Sprint("parent ", i), OwnerKey: "e2e"})
		require.NoError(t, err)
		parents = append(parents, f.ID)
	}
	c.Close()

	// Kill the gateway each time the ledger has grown: a child was just
	// created and its parent's event is held unacknowledged.
	seen := 0
	for kill := range 5 {
		polltest.Until(t, "", func() (bool, string) {
			n := len(ledgerLines(t, ledger))
			return n > seen, fmt.Sprintf("kill %d: the ledger has %d lines, no new one", kill, n)
		}, polltest.Within(60*time.Second), polltest.Every(10*time.Millisecond))
		g.kill(t)
		seen = len(ledgerLines(t, ledger))
		g = startGateway(t, bin, home, logf, "--config", cfg)
	}

	c, err = api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	children := map[string]apitype.FlowView{} // parent → its child
	polltest.Until(t, "", func() (bool, string) {
		page, err := c.ViewFlows(ctx, apitype.FlowFilter{ControllerID: "spawner"})
		require.NoError(t, err)
		clear(children)
		done := 0
		for _, v := range page.Flows {
			if v.ParentFlowID == "" {
				continue
			}
			if prev, dup := children[v.ParentFlowID]; dup {
				t.Fatalf("parent %s has two children, %s and %s", v.ParentFlowID, prev.ID, v.ID)
			}
			children[v.ParentFlowID] = v
			if v.Status.Terminal() {
				done++
			}
		}
		return done == len(parents), fmt.Sprintf("%d of %d children ended", done, len(parents))
	}, polltest.Within(120*time.Second), polltest.Every(50*time.Millisecond))
	retried := 0
	for _, line := range ledgerLines(t, ledger) {
		parent, rest, _ := strings.Cut(line, " ")
		child, created, _ := strings.Cut(rest, " ")
		require.Equal(t, children[parent].ID, child, "an answer for parent %s named another flow", parent)
		if created == "false" {
			retried++
		}
	}
	require.Positive(t, retried, "no create was asked again after a kill")
	for _, p := range parents {
		v := children[p]
		require.Equal(t, sdk.FlowSucceeded, v.Status, "child of %s: %s", p, v.BlockedSummary)
		require.JSONEq(t, `{"started_seen":true}`, string(v.State), "the child's flow.started reached the plugin")
		require.Equal(t, "child-of-"+p, v.IdempotencyKey)
	}
}

// ledgerLines reads the spawner's ledger, none when it does not exist.
func ledgerLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	if s := strings.TrimSpace(string(b)); s != "" {
		return strings.Split(s, "\n")
	}
	return nil
}
