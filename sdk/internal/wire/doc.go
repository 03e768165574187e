// Package wire holds what both ends of the controller plugin protocol
// share and what package sdk may not export: the go-plugin handshake and
// plugin, the message size limit, how errors cross as gRPC statuses, and
// the gateway's end of the protocol that package sdk implements and
// sdk/pluginclient wires up (HostServer, ControllerClient). It imports
// neither package, so the records it carries (sdk.Flow) are type
// parameters and the ends it hands over are set by package sdk.
package wire
