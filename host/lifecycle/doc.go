// Package lifecycle gives every long-running part of the gateway (the
// store, the runner, the plugin supervisor, event delivery, the
// scheduler, the sweep, the web listener, the API socket) the same Start
// and Stop.
//
// # Service
//
// A part embeds a Service and calls its Start and Stop from its own:
//
//   - Start(ctx, setup) runs setup once, with a context that lives until
//     Stop (not until ctx, which only bounds the call). If setup fails,
//     every goroutine it launched is stopped and the error, prefixed with
//     the part's name, is returned; the part stays stopped and may be
//     started again. Starting a started part does nothing.
//   - Go(fn) runs fn in a goroutine that Stop cancels and waits for.
//   - Stop(ctx) cancels those goroutines and waits for them, or for ctx.
//     Stopping a stopped (or never started) part does nothing.
//
// Start, Go and Stop are safe to call from any goroutine, in any order.
//
// # Group
//
// StartAll starts parts in order. When one fails, the ones already
// started are stopped in reverse order and the error names the part that
// failed, so a gateway never runs with a piece missing. The returned Group
// stops them all, in reverse order, and reports every failure.
//
// A Group can also be started in steps (Group.Start), when a part is
// built from what an earlier one opened: the gateway starts its store,
// builds the engine and the parts over it, then starts those. A failure
// at any step stops every part of every earlier step, in reverse, so the
// caller has one way back: stop the group.
package lifecycle
