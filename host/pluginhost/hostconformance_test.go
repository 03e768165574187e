package pluginhost_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// conformanceController is the controller name the conformance flows are
// made for and the gateway's host serves.
const conformanceController = "conformance"

// The gateway's in-process host, over a real engine on a real bbolt file,
// passes the sdk.Host conformance suite that sdktest's Host passes.
func TestInProcessHostConformance(t *testing.T) {
	t.Parallel()
	sdktest.RunHostConformance(t, func(t *testing.T) sdktest.HostFixture {
		eng := conformanceEngine(t)
		return gatewayFixture(eng, pluginhost.NewHost(eng, conformanceController, nil))
	})
}

// The Host a controller plugin is handed (sdk's gRPC client) passes the
// same suite against the gateway: the real engine and bbolt behind the
// gateway's host, served on its unix socket by pluginclient.Connect, and
// called over real gRPC (sdktest.WireHost).
func TestGRPCHostConformance(t *testing.T) {
	t.Parallel()
	sdktest.RunHostConformance(t, func(t *testing.T) sdktest.HostFixture {
		eng := conformanceEngine(t)
		return gatewayFixture(eng, sdktest.WireHost(t, pluginhost.NewHost(eng, conformanceController, nil)))
	})
}

// conformanceCap is the engine's cap on a controller's active flows in the
// conformance suite: small, so that its case reaches it.
const conformanceCap = 3

// conformanceEngine opens an engine on a fresh bbolt file, with the
// conformance cap.
func conformanceEngine(t *testing.T) *engine.Engine {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	eng, err := engine.New(st, engine.Config{MaxActiveFlows: conformanceCap})
	require.NoError(t, err)
	return eng
}

// gatewayFixture drives eng as the gateway's runner and API do, around
// host, the sdk.Host under test.
func gatewayFixture(eng *engine.Engine, host sdk.Host) sdktest.HostFixture {
	return sdktest.HostFixture{
		Host: host,
		CreateFlow: func(goal string, state json.RawMessage) (*sdk.Flow, error) {
			return eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "conformance-owner", ControllerID: conformanceController, Goal: goal, State: state})
		},
		StartTask: func(id string) error {
			_, err := eng.StartTask(id, engine.StartInput{})
			return err
		},
		FinishTask: func(id string, status sdk.TaskStatus, r sdk.Result) error {
			_, err := eng.FinishTask(id, engine.FinishInput{Status: status, Result: &r})
			return err
		},
		Events: func(flowID string) ([]sdk.Event, error) {
			evs, err := eng.Events(flowID)
			out := make([]sdk.Event, 0, len(evs))
			for _, ev := range evs {
				out = append(out, *ev)
			}
			return out, err
		},
		FireWakes: func() error {
			_, err := eng.FireWakes(0)
			return err
		},
		MaxActiveFlows: conformanceCap,
	}
}
