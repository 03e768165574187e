// Package wire holds what both ends of the controller plugin protocol
// share and what package sdk may not export: the go-plugin handshake and
// plugin, the message size limit, and how errors cross as gRPC statuses.
// Package sdk (the plugin's end) and sdk/pluginclient (the gateway's end)
// use it; it imports neither, so the records it carries (sdk.Flow) are
// type parameters.
package wire
