package flows

import (
	"context"
	"io"
	"maps"
	"slices"
)

// Command is one command a typed pipeline stage can name: a pure data
// stage from Builtins, or one an executor adds (exec, state.get, approve,
// a plugin's stage). Run receives every item the previous stage produced.
type Command struct {
	// Name is what a stage writes to call the command ("where").
	Name string
	// Description is one line for commands.list and help.
	Description string
	// SideEffects names what the command does beyond transforming items
	// ("local_exec", "writes_state", "renders"); empty for a pure command.
	SideEffects []string
	// Plugin is the controller plugin that provides the command; empty
	// for a built-in or an executable stage.
	Plugin string
	// Run transforms the items. Its error message is the stage's error,
	// shown as is, so it should be Lobster's message where Lobster has one.
	Run func(ctx context.Context, call *Call) (StageOutput, error)
}

// Call is what a command receives for one stage.
type Call struct {
	// Items are the previous stage's output (the pipeline's input for the
	// first stage).
	Items []any
	// Args are the stage's parsed arguments.
	Args StageArgs
	// Stage is the stage's index in the pipeline, from 0.
	Stage int
	// Render receives what renderer commands (json, table) print. Never nil
	// while a pipeline runs.
	Render io.Writer
	// Commands is the command set the pipeline runs with (commands.list
	// lists it).
	Commands Commands
}

// StageOutput is what a command returns.
type StageOutput struct {
	// Items go to the next stage, or become the result.
	Items []any
	// Halt stops the pipeline after this stage; Items become the result
	// (an approve stage's approval_request, for instance).
	Halt bool
	// Rendered says the command printed the items itself (a renderer), so
	// a caller should not print the result again.
	Rendered bool
}

// Commands is a set of pipeline commands by name. The zero value has none.
type Commands map[string]*Command

// With returns a copy of c with cmds added, replacing any of the same name.
func (c Commands) With(cmds ...*Command) Commands {
	out := maps.Clone(c)
	if out == nil {
		out = Commands{}
	}
	for _, cmd := range cmds {
		out[cmd.Name] = cmd
	}
	return out
}

// Names lists the command names, sorted.
func (c Commands) Names() []string {
	return slices.Sorted(maps.Keys(c))
}

// UnknownCommandError is a stage naming a command the set does not hold.
// Its message is Lobster's, "Unknown command: X".
type UnknownCommandError struct{ Name string }

func (e *UnknownCommandError) Error() string { return "Unknown command: " + e.Name }

// PipelineResult is what a pipeline run produced.
type PipelineResult struct {
	// Items are the last stage's output, or the halting stage's.
	Items []any
	// Halted is the index of the stage that halted the pipeline, or -1.
	Halted int
	// Rendered says a stage that ran was a renderer (json, table), so the
	// caller should not print Items as well.
	Rendered bool
	// Counts holds, per stage that ran, how many items it produced.
	Counts []int
}

// RunPipeline runs stages over input with the commands in cmds
// (lobster-format §14.2): each stage gets the previous stage's items, a
// halting stage ends the run with its items, and renderers write to
// render (io.Discard if nil). A stage naming a command cmds lacks fails
// with *UnknownCommandError when it is reached; a stage that fails ends
// the run with the stage's error. Stages from start onwards run, which is
// how a pipeline resumes after a gate.
func RunPipeline(ctx context.Context, stages []Stage, start int, input []any, cmds Commands, render io.Writer) (PipelineResult, error) {
	if render == nil {
		render = io.Discard
	}
	res := PipelineResult{Items: input, Halted: -1}
	for i := start; i < len(stages); i++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		st := stages[i]
		cmd, ok := cmds[st.Name]
		if !ok {
			return res, &UnknownCommandError{Name: st.Name}
		}
		out, err := cmd.Run(ctx, &Call{Items: res.Items, Args: st.Args, Stage: i, Render: render, Commands: cmds})
		if err != nil {
			return res, err
		}
		res.Items = out.Items
		res.Rendered = res.Rendered || out.Rendered
		if res.Items == nil {
			res.Items = []any{}
		}
		res.Counts = append(res.Counts, len(res.Items))
		if out.Halt {
			res.Halted = i
			return res, nil
		}
	}
	return res, nil
}

// Builtins returns the pure data commands of lobster-format §14.3: where,
// pick, head, sort, dedupe, groupBy, map, template, the json and table
// renderers, commands.list, email.triage and workflows.list. Commands that start processes, keep state
// or wait for people are added by the executor with Commands.With.
func Builtins() Commands {
	return Commands{}.With(
		whereCommand, pickCommand, headCommand, sortCommand, dedupeCommand,
		groupByCommand, mapCommand, templateCommand, jsonCommand, tableCommand, commandsListCommand,
		emailTriageCommand, workflowsListCommand,
	)
}

// executorCommands are the commands the pipeline controller adds to
// Builtins: exec, the gates, the state stages, the model stages and
// workflows.run.
var executorCommands = []string{"exec", "approve", "ask", "state.get", "state.set", "diff.last", "llm.invoke", "llm_task.invoke", "workflows.run"}

// IsBuiltinStage reports whether name is a built-in stage: one of
// Builtins, or one the pipeline controller adds (exec, approve, ask,
// state.get, state.set, diff.last, llm.invoke, llm_task.invoke,
// workflows.run). No plugin or executable can provide a
// stage of such a name.
func IsBuiltinStage(name string) bool {
	_, ok := Builtins()[name]
	return ok || slices.Contains(executorCommands, name)
}
