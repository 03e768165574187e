package sdktest_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// The in-memory Host passes the same sdk.Host conformance suite as the
// gateway's hosts (host/pluginhost runs it against those).
func TestHostConformance(t *testing.T) {
	t.Parallel()
	sdktest.RunHostConformance(t, func(t *testing.T) sdktest.HostFixture {
		h := sdktest.NewHost()
		return memoryFixture(h, h)
	})
}

// The in-memory Host passes it over the wire too, as a controller plugin
// is handed it (WireHost): every call and every error crosses the real
// protocol, with nothing lost on the way.
func TestHostConformanceOverTheWire(t *testing.T) {
	t.Parallel()
	sdktest.RunHostConformance(t, func(t *testing.T) sdktest.HostFixture {
		h := sdktest.NewHost()
		return memoryFixture(h, sdktest.WireHost(t, h))
	})
}

// memoryFixture drives the in-memory h as the gateway does, around host,
// the sdk.Host under test: h itself, or a Host that reaches it.
func memoryFixture(h *sdktest.Host, host sdk.Host) sdktest.HostFixture {
	h.SetController("conformance")
	h.SetMaxActiveFlows(3)
	return sdktest.HostFixture{
		Host: host,
		CreateFlow: func(goal string, state json.RawMessage) (*sdk.Flow, error) {
			return h.NewFlow("conformance", goal, state)
		},
		StartTask: func(id string) error { _, err := h.StartTask(id); return err },
		FinishTask: func(id string, status sdk.TaskStatus, r sdk.Result) error {
			_, err := h.FinishTask(id, status, sdktest.Result(r))
			return err
		},
		Events:         func(flowID string) ([]sdk.Event, error) { return h.Events(flowID), nil },
		FireWakes:      func() error { h.FireWakes(time.Now()); return nil },
		MaxActiveFlows: 3,
	}
}
