// Package apitype holds the words of flowgate's API: the requests, filters
// and answers that api.Client's methods take and return. It has no logic
// and imports only sdk, host/stored (the task as the store keeps it, with
// the runner's pids that `tasks show` prints; itself a leaf of records)
// and the standard library, so a command (package cli) can speak the API
// without importing the engine that serves it.
//
// # Same shape as the engine
//
// Each type here has the fields of the engine type it stands for, in the
// same order and with the same JSON tags, so an answer's JSON on the
// gateway's socket is byte for byte what the engine's type encodes to.
// Package api converts between the two at one seam (its toapi.go),
// mostly with Go conversions, which compile only while the shapes agree;
// its tests fail when a field added to the engine's type is missing here
// or is not copied.
//
// # Example
//
// A command lists the failed flows of one owner through any api.Client:
//
//	page, err := c.ViewFlows(ctx, apitype.FlowFilter{
//		Status:   sdk.FlowFailed,
//		OwnerKey: "deploy",
//		Limit:    20,
//	})
package apitype
