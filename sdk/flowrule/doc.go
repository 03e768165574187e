// Package flowrule is what every sdk.Host does to a flow's record for each
// call a controller makes: which status SetWaiting parks a flow in, what
// Resume clears and when it tells the controller, what Finish and Fail
// keep, and what a continuation reuses and reruns (Continuation, Receipt,
// Settled, SameRequest, Successor). The gateway's engine and sdktest's in-memory Host both apply these
// functions, so the two cannot drift apart; sdktest.RunHostConformance
// checks the result through the sdk.Host interface.
//
// Controllers never need this package: it is for hosts. Each function
// changes the flow it is given in place and moves its status through a
// Mover, which must apply Move (a host may do more along the way:
// the gateway releases the events a blocked flow parked). A refused move
// is returned unchanged and the flow is left as the Mover left it, so the
// caller discards it.
package flowrule
