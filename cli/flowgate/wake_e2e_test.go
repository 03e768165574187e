package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// helperEnv makes the test binary serve a controller, or an etcd,
// instead of running tests; its value names which.
const helperEnv = "FLOWGATE_E2E_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "waker":
		sdk.Serve(waker{})
		os.Exit(0)
	case etcdHelper:
		serveEtcd()
	}
	os.Exit(m.Run())
}

// waker sets wakes when its flow starts: "a" twice and "b", wake_after_ms
// and that plus 500 ms after the flow was created (as on a redelivered
// event, the second "a" changes nothing). Then it moves the flow to
// running. It records each flow.woken under its event's seq (so a
// redelivered event writes the same entry) and finishes the flow once "a"
// and "b" have woken it.
type waker struct{}

func (waker) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "waker", Version: "0.0.1", APIVersion: sdk.APIVersion}, nil
}

func (waker) Shutdown(context.Context) error { return nil }

type wakerState struct {
	WakeAfterMS int               `json:"wake_after_ms"`
	Woken       map[string]string `json:"woken,omitempty"`
}

func (waker) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	f, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil || f.Status.Terminal() {
		return err
	}
	var st wakerState
	if err := json.Unmarshal(f.State, &st); err != nil {
		return err
	}
	switch ev.Type {
	case sdk.EventFlowStarted:
		at := f.CreatedAt.Add(time.Duration(st.WakeAfterMS) * time.Millisecond)
		for _, w := range []struct {
			key string
			at  time.Time
		}{{"a", at}, {"a", at.Add(time.Hour)}, {"b", at.Add(500 * time.Millisecond)}} {
			if err := h.WakeAt(ctx, f.ID, w.at, w.key); err != nil {
				return err
			}
		}
		if f.Status == sdk.FlowQueued {
			_, err = h.Resume(ctx, f.ID, f.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning})
		}
		return err
	case sdk.EventFlowWoken:
		var w sdk.Woken
		if err := json.Unmarshal(ev.Data, &w); err != nil {
			return err
		}
		if st.Woken == nil {
			st.Woken = map[string]string{}
		}
		st.Woken[strconv.FormatInt(ev.Seq, 10)] = w.Key
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		if len(st.Woken) >= 2 {
			_, err = h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{State: b})
		} else {
			_, err = h.UpdateFlow(ctx, f.ID, f.Revision, sdk.FlowUpdate{State: b})
		}
		return err
	}
	return nil
}

// TestWakeSurvivesGatewaySIGKILL sets wakes through a real gateway,
// SIGKILLs the gateway before they are due, starts another, and checks
// that each key woke the flow exactly once.
func TestWakeSurvivesGatewaySIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	cfg := filepath.Join(work, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		"plugins:\n  - name: waker\n    path: %s\n    args: [\"-test.run=^$\"]\n    env:\n      %s: waker\n", os.Args[0], helperEnv)), 0o600))

	g := startGateway(t, bin, home, logf, "--config", cfg)
	out, err := exec.Command(bin, "--home", home, "tasks", "flow", "create", "--controller", "waker",
		"--goal", "wake twice", "--owner", "e2e", "--state", `{"wake_after_ms":4000}`, "--json").Output()
	require.NoError(t, err, "%s", out)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal(out, &f))
	polltest.Until(t, "", func() (bool, string) {
		return viewFlow(t, home, f.ID).Status == sdk.FlowRunning, "the controller never set its wakes"
	}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
	g.kill(t) // the wakes are set, in the store, and (most likely) not due yet

	g = startGateway(t, bin, home, logf, "--config", cfg)
	defer g.kill(t)
	v := showUntilDone(t, bin, home, f.ID)
	require.Equal(t, sdk.FlowSucceeded, v.Status, "%s (controller error: %s)", v.BlockedSummary, v.ControllerError)
	var st wakerState
	require.NoError(t, json.Unmarshal(v.State, &st))
	keys := map[string]int{}
	for _, k := range st.Woken {
		keys[k]++
	}
	require.Equal(t, map[string]int{"a": 1, "b": 1}, keys, "each key wakes the flow once: %v", st.Woken)

	// The gateway fired each key once, whatever the controller recorded.
	fired := map[string]int{}
	for _, e := range flowHistory(t, bin, home, f.ID).Entries {
		if e.Kind == engine.HistoryTimerFired {
			var d struct{ Key string }
			require.NoError(t, json.Unmarshal(e.Data, &d))
			fired[d.Key]++
		}
	}
	require.Equal(t, map[string]int{"a": 1, "b": 1}, fired)
}
