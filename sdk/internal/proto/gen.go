// Package proto is the generated Go code of the controller protocol,
// sdk/proto/flowgate/controller/v1/controller.proto. It is internal: the
// sdk package converts it to and from its hand-written types in one place
// (sdk/wire.go), for the plugin's end and for the gateway's, which
// sdk/pluginclient reaches through sdk/internal/wire.
//
// Regenerate with go generate after editing the .proto; CI checks that
// the committed files match. It needs protoc 3.21.12,
// protoc-gen-go v1.36.12 and protoc-gen-go-grpc v1.6.1 on PATH.
package proto

//go:generate protoc -I ../../proto --go_out=../.. --go_opt=module=github.com/flowgate/flowgate/sdk --go-grpc_out=../.. --go-grpc_opt=module=github.com/flowgate/flowgate/sdk flowgate/controller/v1/controller.proto
