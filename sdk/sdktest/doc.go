// Package sdktest tests flowgate controller plugins without a gateway.
//
// # The harness
//
// Run drives a controller through a test twice: in-process, and over the
// protocol it runs on under a gateway (go-plugin gRPC, and the Host served
// back on its unix socket over one connection), so the wire is tested too. The
// Harness plays the gateway: StartFlow makes a managed flow and delivers
// flow.started, FinishTask ends a task and delivers task.finished,
// FireWakes fires the wakes (Host.WakeAt) due at a time and delivers
// flow.woken, Drain delivers whatever else was queued, Flow and Tasks read
// the records.
//
//	func TestFetcher(t *testing.T) {
//		sdktest.Run(t, fetcher{}, func(t *testing.T, h *sdktest.Harness) {
//			f := h.StartFlow("fetch the report", nil)
//			tasks := h.Tasks(f.ID)
//			h.FinishTask(tasks[0].ID, sdk.TaskSucceeded)
//			if got := h.Flow(f.ID).Status; got != sdk.FlowSucceeded {
//				t.Fatalf("flow is %s, want succeeded", got)
//			}
//		})
//	}
//
// New makes an in-process harness alone. FinishTask plays the runner: it
// starts a queued task, ends it and records its Result, by default that of
// an empty output; Stdout and Result say what the task produced. RunStage
// calls the controller's sdk.StageProvider as the gateway does when a
// pipeline names one of its stages.
//
// # The in-memory host
//
// Host is an sdk.Host with the gateway engine's rules: the state machine of
// package sdk (the functions the engine calls), revisions and
// *sdk.RevisionConflictError, idempotency keys, no way out of a terminal
// status, sticky cancel requests, and a per-flow event outbox holding the
// events the gateway would queue. Use it on
// its own to call a controller's HandleEvent directly (see the example),
// or through Harness.Host to act as an operator: Resume a waiting flow,
// RequestCancel, StartTask. ProvideStage plays another plugin that
// provides a pipeline stage, for ListStages and RunStage.
//
// # The conformance suite
//
// RunHostConformance runs the sdk.Host contract against any implementation.
// Host passes it, and so do the gateway's host and the gRPC client a
// plugin is handed (host/pluginhost runs it against a real engine), which is
// what makes a test against Host worth as much as one under a gateway.
// WireHost gives any sdk.Host as a plugin is handed it, every call
// crossing the real protocol, to run the suite over the wire.
//
// # What to test
//
// Events arrive at least once: deliver one twice with Harness.Deliver and
// check that nothing was done twice (idempotency keys, revision checks).
// Test a revision conflict by changing the flow behind the controller's
// back, and a cancel with Host.RequestCancel followed by Harness.Drain.
package sdktest
