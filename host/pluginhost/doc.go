// Package pluginhost runs controller plugins and delivers their events.
//
// # Supervisor
//
// The Supervisor starts every plugin named in the gateway config as a
// go-plugin gRPC subprocess in its own process group (checking its sha256
// first when one is configured), restarts it with backoff within a restart
// budget when it dies, and shuts it down (Shutdown, then a kill of the
// group) when the gateway stops. Each instance has an epoch; host
// callbacks from a replaced instance are refused with sdk.ErrPluginShutdown.
// A controller may only read and change the flows it drives.
//
// Config mistakes stop the gateway instead of being retried: a path that
// does not name an executable fails NewSupervisor, and a plugin whose Info
// reports a name other than its config entry's fails Start.
//
// # Delivery
//
// The Deliverer hands each flow's outbox to the flow's controller: in
// order, one event at a time per flow, at least once. An event is removed
// only when HandleEvent returns nil. A failure is retried with backoff; a
// controller that is restarting does not count against the event, but an
// error, a timeout or a controller that cannot run at all does, and after
// MaxFailures the event is parked and the flow blocked with a summary that
// says why. Unblocking the flow delivers the event again.
package pluginhost
