// Package errcode is the one table that names flowgate's sentinel errors
// on the wire. Each entry ties a sentinel (sdk.ErrNotFound, …) to the
// stable code that names it ("not_found") and to the status it travels
// under in the plugin protocol (gRPC) and in the HTTP/JSON API. Both
// transports turn an error into its entry with Of and a code back into
// the same sentinel with Named, so a sentinel added here crosses both.
//
// # Sentinels
//
// The sentinels are defined here, below package sdk, so that the plugin
// protocol inside sdk and the gateway's API can share the table without
// an import cycle. Package sdk exports the very same values
// (sdk.ErrNotFound is ErrNotFound); plugin authors use those and never
// need this package.
//
// # Example
//
//	c, ok := errcode.Of(err)
//	if ok && c.HTTP != 0 {
//		status, code := c.HTTP, c.Name
//	}
package errcode
