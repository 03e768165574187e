// Package pipeline is the first-party controller that runs a workflow
// file (see package flows and the Lobster reference, lobster-format.md) as
// a managed flow. New returns it; its name, and so the controller_id of
// its flows, is "pipeline".
//
// # State
//
// flowgate pipeline run starts a flow with this state:
//
//	{"file": "/abs/path/of/workflow", "args": {…}, "cwd": "/caller/cwd"}
//
// The controller adds and keeps two keys and no others:
//
//	"results": {"<step id>": <flows.StepResult JSON>, …}
//	"output":  [ … ]   (flows.Output; written when the flow finishes)
//
// A step result uses the reference's field names: {"id", "stdout",
// "json", "approved", "approvedBy", "initiatedBy", "subject", "response",
// "skipped", "error", "errorMessage"}, absent fields omitted.
//
// Gates are answered by the CLI, never by the controller, in
//
//	"decisions": {"<step id>": {"approved": bool, "response": any, "by": "name", "at": "RFC3339"}}
//
// followed by a resume of the flow (a flow.resumed event).
//
// # Running
//
// Every event re-reads the flow, loads the workflow file again and derives
// what is done from state.results and the flow's tasks, so an event that
// arrives twice does nothing twice. Each shell step runs as one task with
// the idempotency key "<flow id>:<step id>:0", so a repeated create
// returns the first task. Then the steps are taken in order:
//
//   - a false when/condition records {"id", "skipped": true};
//   - a shell step (run/command) creates its task — the command templated
//     with ${arg} and $step.path, the env with LOBSTER_ARGS_JSON,
//     LOBSTER_ARG_<NAME>, the workflow's and the step's env, the cwd
//     relative to the caller's directory, the resolved stdin as input,
//     timeout_ms as the timeout and retry as the task's retry policy — and
//     waits for task.finished. A succeeded task's stdout becomes the
//     result (JSON parsed when it is JSON). A failed, timed-out,
//     cancelled or lost task applies on_error: stop fails the flow,
//     naming the task and the error; continue records {"error": true,
//     "errorMessage"} and goes on; skip_rest records it, marks the
//     remaining steps skipped and finishes;
//   - an approval gate, after the step's own execution (an approval-only
//     step's result comes from its stdin), parks the flow waiting until a
//     decision is recorded. Approved, the flow goes on; denied, the run is
//     cancelled, as the reference reports it ("cancelled"): the flow is
//     asked to cancel and, with no task active, becomes cancelled;
//   - an input gate parks the flow until a response is recorded, and
//     checks it against the step's schema; a rejected response keeps the
//     flow waiting, with the reason in the wait's "error";
//   - parallel, for_each and workflow steps are not run yet: reaching one
//     fails the flow with "step X uses parallel, which the pipeline
//     controller does not run yet".
//
// After the last step the flow is finished with the output. Every write
// carries the revision the event read; a *sdk.RevisionConflictError is
// returned, and the event comes again.
//
// # Waits
//
// A flow parked at a gate is waiting, its current step the gate's step,
// and its wait one of:
//
//	{"kind": "approval", "step": "plan", "prompt": "Approve plan?",
//	 "preview": "<first 2000 characters of the step's output>",
//	 "items": […], "resume_token": "<flow id>:plan", "approval_id": "1a2b3c4d",
//	 "initiated_by": "…", "required_approver": "…",
//	 "require_different_approver": true, "error": "…"}
//
//	{"kind": "input", "step": "review", "prompt": "Review?",
//	 "schema": {…}, "defaults": …, "subject": …,
//	 "resume_token": "<flow id>:review", "error": "…"}
//
// approval_id is the first 8 hex digits of the SHA-256 of resume_token.
// Identity fields and error are present only when set; preview only when
// there is one. The approval's prompt, items and preview come from the
// step's JSON output when it asks for approval itself (a
// "requiresApproval" object, or a "prompt"), else from the step's
// approval config (lobster-format §8.1). An input subject larger than
// 192000 bytes of JSON is shown as {"truncated": true, "bytes": N,
// "preview": "…"}; the result keeps all of it.
package pipeline
