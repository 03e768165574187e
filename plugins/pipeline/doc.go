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
// or, for a pipeline string, "pipeline": "exec … | where …" instead of file,
// and an optional "env" object that every step's environment starts from
// (the scheduler puts FLOWGATE_SESSION and the run's identity there).
//
// The controller keeps the steps' results in:
//
//	"results": {"<step id>": <flows.StepResult JSON>, …}
//
// (large ones are kept in files the state names; see Limits), and its
// bookkeeping under "gate_until", "plan", "prior_output", "continued"
// and "stages". The state is the controller's own: nothing outside this
// package reads it (a test of this package fails if code elsewhere names
// more of it than the controller and its checks). What the flow produced
// is the flow's: the workflow's output (flows.Output), given to Finish,
// is sdk.Flow.Output, {"value": [ … ]}, and what a pipeline string's
// renderer printed is its Text; the gate answers are sdk.Flow.Decisions.
//
// results also holds each parallel branch's result under its branch id
// (as the reference does, so $branch.path refs work), and the results of
// a sub-workflow's steps under "<workflow step id>><sub step id>" (nested
// sub-workflows add a further "<id>>"), which no ref can name.
//
// A step result uses the reference's field names: {"id", "stdout",
// "json", "approved", "approvedBy", "initiatedBy", "subject", "response",
// "skipped", "error", "errorMessage"}, absent fields omitted.
//
// # Limits
//
// A step's stdout is at most 256 KiB (a longer one fails the step: write
// large output to a file and print its path). Up to sdk.InlineStdout
// (4 KiB) it is kept in the state; a larger one stays in its task's log
// file and the result holds {"stdoutFile", "stdoutSha256"} instead of
// stdout and json. The controller reads the file back when a step it runs
// refers to the result ($step. or LOBSTER_STEP_<STEP>_ in the step or in
// the args and env it is templated with), and all of them when the run
// ends, continues or asks for an input's subject, and fails the flow,
// saying so, if the file is gone or changed (its task was pruned). Results
// kept in the data directory (below) are read back the same way.
//
// A parallel or workflow step combines other steps' results. When its
// combined result encodes to more than sdk.InlineStdout, the state keeps
// it as a reference, {"id", "derived": true} plus its gate fields, and
// the controller computes it again, on every pass, from the results it
// combines (the branches' results, the sub-workflow's results), which the
// state keeps on their own: the combined data is never stored twice.
//
// With a data directory (sdk.DataDirEnv, which the gateway sets; Options.DataDir),
// the rest of what would make the state large is kept in files under
// <dir>/<flow id>/, each named by the SHA-256 of its bytes and never
// changed once written: a step result whose encoding is over
// sdk.InlineStdout, and every result once 128 KiB of results are inline,
// is {"spilled": "<sha256>"} in results; an output over sdk.InlineStdout
// is named by the flow's Output.File, {"path", "sha256"}, instead of
// held in its Value (sdk.Output.ReadValue reads either); a
// continuation's prior outputs over
// 64 KiB are "prior_output_file": "<sha256>"; a state stage's output
// over sdk.InlineStdout is {"spilled": "<sha256>"} in "stage_outputs",
// and the object of them, once over 32 KiB, is "stage_outputs_file":
// "<sha256>". A continuation reads the
// files of its source flow too. The gateway removes a flow's directory
// when it prunes the flow.
//
// With Options.SharedStore (sdk.SharedStoreEnv, which the gateway sets on
// etcd) those values are kept in the gateway's store instead
// (sdk.Host.KeepValue, at most sdk.MaxKeptValue each), where every
// gateway reads them; the output's File is then {"sha256", "kept":
// true}, or, over sdk.MaxKeptValue, a file as above. A step's stdout over sdk.InlineStdout is read
// from its task's record, which holds it whole, and on later passes from
// its log file, or from the record again when the file is on another
// machine.
//
// The encoded state of a flow is at most 768 KiB, which leaves room in
// the flow's record (the store holds at most 1 MiB per record) for its
// wait; the output it finishes with, held beside the state, counts
// toward the same 768 KiB (it is held only up to sdk.InlineStdout when
// there is a data directory). The controller's part of it (results, prior outputs,
// state-stage outputs, stage reports, gate deadlines, plan) is at most
// 512 KiB for any workflow CheckBound
// accepts: what still grows with the workflow is one small entry per
// step result and the plan, and CheckBound (called by pipeline validate
// and run, and by the controller before a flow's first step) refuses a
// workflow that could need more. The other 256 KiB are for the caller's
// args and env; a pass whose state would be larger
// anyway fails the flow with a message naming the largest part; the flow
// is never left blocked on a write the store refuses. Without a data
// directory every value stays inline and that message is the only bound.
// A workflow file is at most
// flows.MaxFileBytes (256 KiB) and a run: line flows.MaxRunBytes (64 KiB);
// pipeline validate refuses larger ones.
//
// Gates are answered through the gateway, never by the controller
// (flowgate tasks flow approve|deny|input, flowgate pipeline resume, or
// any client of the API's DecideGate): the gateway records the answer in
// the flow's Decisions,
//
//	"decisions": {"<step id>": {"approved": bool, "response": any, "by": "name", "at": "RFC 3339 time"}}
//
// and resumes the flow in the same write (a flow.resumed event, which
// carries the decision too). The controller reads it from the flow, or,
// for a flow a gateway of before Flow.Decisions answered, from the same
// object under "decisions" in its state, where such a gateway wrote it.
// The gate's wait carries the approver rules, which the gateway enforces
// before it records an approval (sdk.Wait.CheckApproval); the
// controller checks them again for an answer an older gateway recorded.
//
// # Running
//
// Every event re-reads the flow, loads the workflow file again and derives
// what is done from state.results and the flow's tasks, so an event that
// arrives twice does nothing twice. Each task has an idempotency key, so a
// repeated create returns the first task:
//
//	"<flow id>:<step id>:0"                     a shell step
//	"<flow id>:<step id>/<branch id>:0"         a parallel branch
//	"<flow id>:<step id>/<sub-step id>:<index>" a for_each sub-step, per item
//	"<flow id>:<step id>><sub step id>:0"       a sub-workflow's shell step
//
// (a sub-workflow's own parallel and for_each steps prefix their step id
// the same way). A task's label is its key without the flow id and
// iteration, plus "[<index>]" for a for_each sub-step. Then the steps are
// taken in order:
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
//     checks it against the step's schema; its wait carries the schema,
//     so the gateway refuses a response that fails it before recording
//     it (sdk.Wait.Schema), and one that reaches the controller and
//     fails keeps the flow waiting, with the reason in the wait's "error";
//   - a parallel step creates every branch's task at once — env = the
//     workflow's, the step's, then the branch's env; cwd = the branch's,
//     else the step's, else the workflow's; the branch's stdin; the
//     block's timeout_ms as each task's timeout; the step's retry per
//     task. With wait: all it is done when every branch has ended: all
//     succeeded gives {"json": {"<branch>": <branch json>, …} (branches
//     without json left out), "stdout": that json as text}, and each
//     branch's own result under its id; any failure, once all ended, is
//     the step's failure "Parallel branch failed: …" (on_error applies).
//     With wait: any the first branch to settle (earliest to end) wins,
//     as Promise.race does in Lobster: {"json": {"<winner>": <its json>},
//     "stdout": the winner's stdout}, the winner's result under its id; a
//     winner that failed fails the step. The losers are cancelled
//     (Host.CancelTask) and their results ignored;
//   - a for_each step resolves its expression — a "$step.path" ref, or
//     anything else templated and parsed as JSON, so '["a","b"]' is a
//     literal — to an array ("Workflow step X for_each: expected array,
//     got T" otherwise) and runs the items of a batch at once (their next
//     tasks created in one Advance), each item's sub-steps in order,
//     batch after batch; without batch_size every item is in one batch,
//     and batch_size: 1 runs them one after another, as Lobster does.
//     Sub-steps see item_var as {"json": item, "stdout": the
//     string or its JSON} and index_var as {"json": i, "stdout": "i"},
//     plus the same item's earlier sub-steps; env = workflow, step,
//     sub-step env; cwd = sub-step's, else step's, else workflow's; a
//     sub-step's own when, timeout_ms and retry apply. pause_ms is
//     honoured by prefixing the first task of every item of every
//     later batch with "sleep <pause_ms/1000>; " (a controller has no timer); the
//     pause so counts toward that task's timeout and is repeated by its
//     retries. The result is {"json": [{"<item_var>": item, "<index_var>":
//     i, "<sub id>": its json, else its stdout (skipped sub-steps left
//     out)}, …], "stdout": that array as text}. A failed sub-step fails
//     the step ("for_each item I, step S: …") once the batch's running
//     items have ended, no later item starts, and the step's on_error
//     applies (the reference applies none to for_each; sub-steps'
//     on_error is not used);
//   - a pipeline step runs a typed pipeline (lobster-format §14): pure
//     stages here, each exec stage as a task keyed
//     "<flow id>:<step id>/stage<N>:0". No items are stored between
//     stages: every pass runs the stages again from the first, each exec
//     stage answered by its finished task and each state stage
//     (state.get, state.set, diff.last) by the output it recorded in the
//     state ("stage_outputs"). approve and ask stages park the flow at
//     the gate "<step id>/stage<N>" (decisions are recorded under that
//     key). Parallel branches and for_each sub-steps may be pipelines
//     too: their exec stages are keyed "<flow id>:<step id>/<branch or
//     sub-step id>/stage<N>:<item index>", and approve and ask in them
//     fail as in Lobster. A stage no built-in provides runs the
//     executable of its name on the stage path (Options), as a task.
//     An output over 4 KiB is kept in a file, and so is the object of
//     them once over 32 KiB ("stage_outputs_file"), as results are (see
//     Limits). Each pass records how far each pipeline got under
//     "stages" (sdk.StagesKey, sdk.StageReportsOf; a report lists its first stages up to
//     512 bytes, "more" counting the rest). A flow started with {"pipeline": "…"} instead of a
//     file runs flows.PipelineWorkflow, one pipeline step with id
//     "pipeline";
//   - a workflow step runs the sub-workflow inline, step by step, as part
//     of this flow: its path templated and loaded with flows.LoadSub
//     (relative to the calling file; cycles rejected), its args the
//     resolved workflow_args over its defaults, its env on top of the
//     calling step's env (workflow and step env, LOBSTER_ARG_*), its
//     default cwd the calling step's. Its steps follow these same rules,
//     on_error included; a failure they do not absorb fails the workflow
//     step ("step S failed: …"), whose on_error applies. A gate inside
//     fails it: "sub-workflow halted for approval|input. Sub-workflow
//     approval/input gates are not supported in composition". The result
//     is the sub-workflow's output: {"json": the one item, else the array,
//     "stdout": json as text (a string as it is), "" for no output}.
//
// Results are objects with sorted keys where the reference keeps file
// order. Parallel, for_each and workflow steps may carry an approval gate,
// applied after them as after a shell step.
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
//	 "items": […], "items_total": N, "items_truncated": true,
//	 "resume_token": "<flow id>:plan", "approval_id": "1a2b3c4d",
//	 "initiated_by": "…", "required_approver": "…",
//	 "require_different_approver": true, "error": "…"}
//
//	{"kind": "input", "step": "review", "prompt": "Review?",
//	 "schema": {…}, "defaults": …, "subject": …,
//	 "resume_token": "<flow id>:review", "approval_id": "5e6f7a8b", "error": "…"}
//
// approval_id is the first 8 hex digits of the SHA-256 of resume_token:
// a short id people type to answer either kind. A prompt (and an
// approval's configured preview) is filled in as a run: command is, so
// it shows values, not ${arg} or $step.path templates.
// items_total and items_truncated are set when an approval's items (an
// approve stage's or a step's) were cut to 192 KiB of JSON. A wait is at
// most 224 KiB of JSON, so that it fits in the flow's record beside the
// state; a gate whose prompt, schema, defaults or subject make it larger
// fails the flow, saying so.
// Identity fields and error are present only when set; preview only when
// there is one. The approval's prompt, items and preview come from the
// step's JSON output when it asks for approval itself (a
// "requiresApproval" object, or a "prompt"), else from the step's
// approval config (lobster-format §8.1). An input subject larger than
// 192000 bytes of JSON is shown as {"truncated": true, "bytes": N,
// "preview": "…"}; the result keeps all of it.
package pipeline
