package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/trigger"
)

// TestTriggerDeliveriesSurviveSIGKILL posts 30 deliveries, each sent
// again until it is answered, as a webhook sender retries, while the
// gateway is SIGKILLed and restarted three times. Whatever moment each
// kill hit (before a flow's commit, or between it and the answer), every
// delivery ends with exactly one flow, and every answer it got names that
// flow.
func TestTriggerDeliveriesSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	wf := filepath.Join(work, "noop.lobster")
	require.NoError(t, os.WriteFile(wf, []byte("name: noop\nsteps:\n  - id: a\n    run: \"true\"\n"), 0o600))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	env := append(os.Environ(), "HOOK_TOKEN=tok")
	start := func() *gatewayProc { return startGatewayEnv(t, bin, home, logf, env, "--http", addr) }
	g := start()
	defer func() { g.reap() }()
	flowgate(t, bin, "--home", home, "triggers", "add", "hits", "--pipeline", wf, "--token-env", "HOOK_TOKEN", "--rate", "1000", "--burst", "1000")

	const senders, each = 3, 10
	client := &http.Client{Timeout: 10 * time.Second}
	answers := make([][]string, senders*each) // flow ids each delivery was answered with
	var answered atomic.Int32
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := s*each + i
				body := fmt.Appendf(nil, `{"n":%d}`, n)
				for sent := 0; sent < 2; {
					req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/hooks/hits", bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer tok")
					req.Header.Set("Idempotency-Key", fmt.Sprintf("delivery-%d", n))
					resp, err := client.Do(req)
					if err != nil {
						time.Sleep(20 * time.Millisecond) // the gateway is down: a sender's retry delay
						continue
					}
					var a trigger.Answer
					derr := json.NewDecoder(resp.Body).Decode(&a)
					resp.Body.Close()
					if derr != nil || (resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK) {
						time.Sleep(20 * time.Millisecond)
						continue
					}
					answers[n] = append(answers[n], a.FlowID)
					if sent++; sent == 1 {
						answered.Add(1)
					}
				}
			}
		}()
	}
	for k := 1; k <= 3; k++ {
		polltest.Until(t, "", func() (bool, string) {
			got := answered.Load()
			return int(got) >= k*senders*each/4, fmt.Sprintf("%d deliveries answered before kill %d", got, k)
		}, polltest.Within(60*time.Second), polltest.Every(5*time.Millisecond))
		g.kill(t)
		g = start()
	}
	wg.Wait()

	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	page, err := c.ViewFlows(context.Background(), apitype.FlowFilter{OwnerKey: trigger.OwnerKey("hits"), Limit: 1000})
	require.NoError(t, err)
	require.Len(t, page.Flows, senders*each, "one flow per delivery, none lost, none doubled")
	seen := map[string]bool{}
	for n, ids := range answers {
		require.Len(t, ids, 2, "delivery %d was answered twice", n)
		require.Equal(t, ids[0], ids[1], "delivery %d: the second answer names the first flow", n)
		require.False(t, seen[ids[0]], "delivery %d got another delivery's flow", n)
		seen[ids[0]] = true
	}
	runs, err := c.TriggerRuns(context.Background(), "hits", 0)
	require.NoError(t, err)
	require.Len(t, runs, senders*each)
}
