// Package flows is flowgate's pipeline language: it loads and validates
// Lobster-compatible workflow files and gives an executor the pure
// functions it needs to run them — args, templates, step refs, stdin,
// conditions, the args environment, step results, the output rule,
// input-response validation, dry runs and graphs. Nothing here starts a
// process or touches the network; the only I/O is reading workflow files.
// The Lobster workflow-file reference (lobster-format.md, "the reference")
// is the specification; section numbers below point into it.
//
// # Loading
//
// Load reads a .lobster, .yaml, .yml or .json file (§3): .json as strict
// JSON, the others as YAML 1.2 (yes/no are strings). Sub-workflows named
// by a literal workflow: path are loaded too, relative to the naming
// file's directory, and a file that is already being loaded is a cycle.
// Paths with ${arg} or $step refs are only known at run time; the executor
// loads them with LoadSub, passing the chain of running files. Parse does
// the same for bytes in memory, without sub-workflows.
//
// A file over MaxFileBytes (256 KiB) is refused before it is read, and a
// run: (or command:) line over MaxRunBytes (64 KiB) is refused at its
// step: parsing costs memory many times a file's size, and every task a
// workflow makes must fit a task record.
//
// Unknown keys are ignored, as in the reference. A pipeline: (of a step,
// a parallel branch or a for_each sub-step) without templates is parsed
// at load, so a syntax error is reported with file:line.
//
// # Errors
//
// Every problem is an *Error with file, line, column, the dotted key
// ("steps[2].timeout_ms") and the reference's message (§3.3); Load and
// Parse return all of them at once, joined with errors.Join in file, line
// and key order. Beyond §3.3, loading rejects what the reference would
// only reject at run time: condition syntax ("Unsupported condition"),
// non-boolean non-string conditions, and strict refs (conditions, a stdin
// that is one ref, a for_each ref) to ids that will have no result when
// the step runs ("Unknown step reference").
//
// # Running a workflow
//
// An executor walks Workflow.Steps in order and, per step:
//
//   - resolves args once with ResolveArgs (defaults, then --args-json);
//   - checks Step.When with EvalCondition; false records SkippedResult;
//   - builds the environment with StepEnv (LOBSTER_ARGS_JSON,
//     LOBSTER_ARG_<NAME>, workflow env, step env; §4) and the directory
//     with StepCwd;
//   - resolves Step.Run with ResolveTemplate (${arg}, then $id.path; §5)
//     and stdin with ResolveStdin and StdinText;
//   - records ShellResult, FailedResult (on_error continue/skip_rest) or,
//     for gates, SyntheticResult and InputResult, whose responses are
//     checked with ValidateResponse;
//   - finally returns Output(wf, results), the §5.5 output rule.
//
// Step.Retry always holds the effective retry policy and Step.OnError the
// effective failure policy, so the executor need not know the defaults.
//
// # Typed pipelines
//
// ParsePipeline parses a Lobster pipeline string, "exec … | where a>1 |
// json" (§14.1), into Stages with Lobster's quoting, flags and parse
// errors (ErrEmptyPipeline, ErrEmptyStage, ErrUnclosedQuote). RunPipeline
// streams JSON values through the stages (§14.2) with a set of Commands:
// Builtins holds the pure data commands (where, pick, head, sort, dedupe,
// groupBy, map, template, json, table, commands.list, email.triage,
// workflows.list), and an executor adds the ones that start processes,
// keep state or wait for people with Commands.With. A command that halts
// (a gate) ends the run with its items; running again from the next
// stage resumes the pipeline. For workflows.run, Lobster's GitHub PR
// recipes, this package holds what is pure (ParseWorkflowRun, the gh
// arguments, the state comparison and the items, WorkflowRun.Output) and
// the executor runs gh and keeps the state.
//
// The data commands follow Lobster's JavaScript exactly where it is
// surprising: where compares loosely ("1" == 1, "" == false, null ==
// missing), sort --desc puts nulls first, head --n 2.5 keeps three items,
// pick takes only its first argument. The tests name each such rule.
//
// Items are JSON values as JSON.parse makes them: DecodeJSON reads
// objects into *Object, which keeps keys in JavaScript's order, and
// Stringify writes values as JSON.stringify does, so output, refs and
// dedupe's comparisons match Lobster's byte for byte
// (testdata/lobster holds Lobster's own output for them).
//
// # Plans and graphs
//
// DryRun prints the §17 dry-run plan; Graph renders mermaid, dot or ascii
// from GraphModel's nodes and edges.
//
// # Differences from the reference
//
// Go maps have no insertion order, so JSON the package renders
// (LOBSTER_ARGS_JSON, objects inlined by refs) has sorted keys where the
// reference keeps file order. Numbers decode as float64, as in JavaScript.
package flows
