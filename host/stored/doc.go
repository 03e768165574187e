// Package stored holds the gateway's records as its store keeps them,
// with the bookkeeping that only the gateway reads.
//
// # Why a stored record and a public one
//
// Package sdk is the plugin protocol: sdk.Task is what a controller reads,
// and sdk/proto/.../records.schema.json publishes it for every language.
// The runner also keeps things on a task that mean nothing outside the
// gateway: the pids of the task's process and its shim, how far the
// progress file has been read, which member of a cluster ran it. Were they
// on sdk.Task, every change to the runner would change the protocol.
// So a task lives in the store as a Task of this package: sdk.Task, plus
// those fields. Only host/ packages see it; everything the gateway hands a
// controller (the Host service's answers, watch events) is the embedded
// sdk.Task alone (see Task.Public).
//
// # Layout
//
// Task embeds sdk.Task, so encoding/json writes one flat object: the
// public fields and the runner's side by side, under the same names they
// had when sdk.Task carried them all. A record written before the split
// loads into a Task with every field, and one written after it loads into
// an sdk.Task (which ignores the runner's fields), with no migration.
package stored
