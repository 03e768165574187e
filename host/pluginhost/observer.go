package pluginhost

import "time"

// DeliveryObserver hears how event deliveries end; the gateway's metrics
// implement it. Its methods run on the deliverer's goroutines and must
// not block.
type DeliveryObserver interface {
	// EventDelivered: controller acknowledged an event lag after the
	// event was written.
	EventDelivered(controller string, lag time.Duration)
	// DeliveryFailed: a delivery to controller failed (an error, no
	// answer, or no such controller running).
	DeliveryFailed(controller string)
}

// noDeliveryObserver is the observer of a DeliveryConfig that names none.
type noDeliveryObserver struct{}

func (noDeliveryObserver) EventDelivered(string, time.Duration) {}
func (noDeliveryObserver) DeliveryFailed(string)                {}
