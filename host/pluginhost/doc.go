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
// Config mistakes stop the gateway instead of being retried, with a
// *ConfigError that names the entry's key ("plugins[1].path") and matches
// sdk.ErrInvalid: a path that does not name an executable, or an
// executable whose SHA-256 is not the entry's sha256, fails NewSupervisor;
// a plugin whose Info reports a name other than its entry's fails Start.
//
// Controllers of SupervisorConfig.InProcess run in the gateway's own
// process behind the same Handler and sdk.Host: no process, no restart,
// no epoch. A panic in one is recovered per event as a *PanicError,
// which the Deliverer turns into a blocked flow at once.
//
// Reload replaces one plugin's process (after a rebuild) and resets its
// restart budget and last error; Names lists the controllers it runs,
// as plugins or in this process.
//
// # Checks without a gateway
//
// Probe starts one plugin briefly and checks it as Start would; Check does
// so for every entry of a config and every file of a plugin directory;
// ScanDir finds the plugins of a directory (plugins_dir) by their
// handshake, naming each by what it reports, and returns the files that
// fail it as skipped.
//
// # Delivery
//
// The Deliverer hands each flow's outbox to the flow's controller: in
// order, one event at a time per flow, at least once. An event is removed
// only when HandleEvent returns nil, or with the controller's last write
// for it (sdk.AdvanceRequest.AckSeq), in which case its delivery writes
// nothing more (Deliverer.Acked). A failure is retried with backoff; a
// controller that is restarting does not count against the event, but an
// error, a timeout or a controller that cannot run at all does, and after
// MaxFailures the event is parked and the flow blocked with a summary that
// says why. Unblocking the flow delivers the event again.
package pluginhost
