package sdk

import "context"

// Watcher is implemented by a Controller that is a source of work as well
// as its driver: it watches something of its own (a directory, a queue, an
// API) and creates a flow with Host.CreateFlow for each thing that
// arrives. Declare it with Info.Watch; the gateway then calls Watch once
// per plugin instance, after Setup, with the instance's Host.
//
// Watch should run until ctx ends, which it does when the gateway stops
// or replaces the plugin. Returning an error makes the gateway restart
// the plugin, and Watch is called again on the new instance; returning
// nil ends the watch until the plugin next starts. A crash of the plugin
// or of the gateway can come between any two of Watch's steps, so the
// same thing may be seen again after a restart: key each flow by what it
// is for (FlowRequest.IdempotencyKey), and CreateFlow returns the flow
// the first call made.
type Watcher interface {
	Watch(ctx context.Context, host Host) error
}
