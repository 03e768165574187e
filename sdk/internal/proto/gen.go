// Package proto is the generated code of the controller protocol
// (controller.proto). It is internal: the sdk package converts it to and
// from its hand-written types in one place (sdk/wire.go).
//
// Regenerate with go generate after editing controller.proto; CI checks
// that the committed files match. It needs protoc 3.21.12,
// protoc-gen-go v1.36.12 and protoc-gen-go-grpc v1.6.1 on PATH.
package proto

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative controller.proto
