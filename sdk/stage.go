package sdk

import (
	"context"
	"encoding/json"
)

// Stage describes a typed pipeline stage a controller plugin provides
// (docs/pipelines.md): a command a pipeline string names, like
// "summarize" in `exec --json cat notes.json | summarize --model m`.
// A controller declares its stages in Info.Stages and runs them by
// implementing StageProvider.
type Stage struct {
	// Name is what a pipeline stage writes to call it. It may not be the
	// name of a built-in stage ("where", "exec", "approve", …) nor of a
	// stage another plugin provides: the gateway refuses to start a plugin
	// whose stage clashes, naming both.
	Name string `json:"name"`
	// Description is one line for commands.list.
	Description string `json:"description,omitempty"`
	// SideEffects names what the stage does beyond transforming items
	// ("network", "writes_state"); commands.list shows them. Empty means
	// a pure stage.
	SideEffects []string `json:"sideEffects,omitempty"`
	// Plugin is the controller that provides the stage. Host.ListStages
	// sets it; in Info it is ignored.
	Plugin string `json:"plugin,omitempty"`
}

// StageCall is one run of a stage.
type StageCall struct {
	// FlowID is the flow whose pipeline runs the stage.
	FlowID string `json:"flow_id"`
	// Key names this run of the stage within the flow ("<step>:<stage
	// index>:<iteration>"), and is the same when the same run is asked
	// for again: the pipeline records a stage's output in its flow once
	// it has it, so a stage runs once per run, except when the gateway is
	// killed between the stage's answer and that record. A stage whose
	// side effects must happen once can remember FlowID and Key.
	Key string `json:"key"`
	// Name is the stage's name.
	Name string `json:"name"`
	// Args is Lobster's args object: the named flags, and the positional
	// arguments under "_" ({"model": "m", "_": ["a"]}; a bare --flag is
	// true).
	Args json.RawMessage `json:"args"`
	// Items is the stage's input: one JSON array of items.
	Items json.RawMessage `json:"items"`
}

// StageProvider is implemented by a Controller that provides pipeline
// stages: Serve answers the gateway's RunStage calls with it. Declare the
// stages in Info.Stages; a controller that declares stages but does not
// implement StageProvider fails every run of them.
type StageProvider interface {
	// RunStage runs stage call.Name over call.Items and returns its
	// output: a JSON array is the stage's items, any other JSON value
	// one item, nil or empty no items. An error fails the pipeline's step
	// with the error's message, which names the stage; say what went
	// wrong and what to do. host is the gateway, as in HandleEvent; the
	// flow call.FlowID is driven by another controller, so the flow calls
	// on host refuse it.
	RunStage(ctx context.Context, host Host, call StageCall) (json.RawMessage, error)
}
