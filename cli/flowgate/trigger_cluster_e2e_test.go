package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/trigger"
)

// TestTriggerDeliveryOnceAcrossGateways runs two gateways on one etcd
// installation, each with its own HTTP listener, and posts every one of
// 20 deliveries to both at the same moment: a trigger added through one
// gateway is served by both, each delivery starts one flow between them,
// and both gateways answer with that flow.
func TestTriggerDeliveryOnceAcrossGateways(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real gateway processes on an embedded etcd")
	}
	t.Setenv("FG_E2E_HOOK_TOKEN", "tok") // the gateways inherit it
	f := newFleet(t, clusterLeaseTTL)
	var members []*fleetMember
	for _, name := range []string{"a", "b"} {
		home, err := os.MkdirTemp("", "fgt"+name) // short: the socket path is bounded
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(home) })
		cfg := fmt.Sprintf("store: %s\ncluster:\n  labels: [%s]\n  lease_ttl: %s\nhttp:\n  addr: 127.0.0.1:0\n", f.url, name, f.ttl)
		require.NoError(t, os.WriteFile(filepath.Join(home, gateway.ConfigFile), []byte(cfg), 0o600))
		members = append(members, f.startOn(name, home))
	}
	ctx := context.Background()
	_, err := members[0].api.AddTrigger(ctx, apitype.TriggerInput{Name: "shared", Controller: "ctl", TokenEnv: "FG_E2E_HOOK_TOKEN", Rate: 1000, Burst: 1000})
	require.NoError(t, err)
	var urls []string
	for _, m := range members {
		st, err := m.api.Status(ctx)
		require.NoError(t, err)
		urls = append(urls, "http://"+st.HTTPAddr+"/hooks/shared")
	}

	const deliveries = 20
	for n := range deliveries {
		codes, ids := make([]int, 2), make([]string, 2)
		var wg sync.WaitGroup
		for i, u := range urls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(fmt.Appendf(nil, `{"n":%d}`, n)))
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer tok")
				req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("d-%d", n))
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				var a trigger.Answer
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
				codes[i], ids[i] = resp.StatusCode, a.FlowID
			}()
		}
		wg.Wait()
		require.ElementsMatch(t, []int{http.StatusAccepted, http.StatusOK}, codes, "delivery %d: one gateway created, the other found", n)
		require.Equal(t, ids[0], ids[1], "delivery %d: both answered with one flow", n)
	}
	page, err := f.eng.ListFlows(engine.FlowFilter{OwnerKey: trigger.OwnerKey("shared"), Limit: 1000})
	require.NoError(t, err)
	require.Len(t, page.Flows, deliveries)
}
