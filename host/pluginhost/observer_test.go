package pluginhost_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// observed is a DeliveryObserver that counts what it hears.
type observed struct {
	mu        sync.Mutex
	delivered map[string]int
	failed    map[string]int
}

func (o *observed) EventDelivered(controller string, lag time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if lag >= 0 {
		o.delivered[controller]++
	}
}

func (o *observed) DeliveryFailed(controller string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed[controller]++
}

func (o *observed) counts() (delivered, failed int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.delivered["ctl"], o.failed["ctl"]
}

// The observer hears each failed delivery and each acknowledged event,
// with a lag that is never negative.
func TestDeliveryObserverHearsFailuresAndAcks(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	rec := &recorder{fn: func(context.Context, sdk.Event) error {
		if calls.Add(1) <= 2 {
			return errors.New("database unreachable")
		}
		return nil
	}}
	obs := &observed{delivered: map[string]int{}, failed: map[string]int{}}
	eng := newDeliverer(t, func(string) (pluginhost.Handler, error) { return rec, nil },
		pluginhost.DeliveryConfig{Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Observer: obs})
	_, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	polltest.Until(t, "the event acknowledged", func() bool { d, _ := obs.counts(); return d == 1 })
	_, failed := obs.counts()
	require.Equal(t, 2, failed)
}
