package flows

import (
	"context"
	"errors"
	"fmt"
)

// Lobster's named workflows are two built-in recipes that watch a GitHub
// pull request through the gh CLI. workflows.list describes them, as a
// pure stage; workflows.run runs one, which starts gh and keeps state,
// so the pipeline controller provides it: this file parses the stage and
// github_pr_monitor.go words what the recipe emits.

// Workflow names of the recipes workflows.run knows.
const (
	PRMonitorWorkflow       = "github.pr.monitor"
	PRMonitorNotifyWorkflow = "github.pr.monitor.notify"
)

// workflowsListCommand is Lobster's workflows.list: each recipe's name,
// description, argsSchema, examples and sideEffects, in that order and in
// the registry's order.
var workflowsListCommand = &Command{
	Name:        "workflows.list",
	Description: "List the named workflows workflows.run can run (Lobster's GitHub PR recipes): {name, description, argsSchema, examples, sideEffects}",
	SideEffects: []string{},
	Run: func(context.Context, *Call) (StageOutput, error) {
		return StageOutput{Items: []any{
			workflowEntry(PRMonitorWorkflow, "Fetch PR state via gh, diff against last run, emit only on change.", true,
				"Monitor a PR and report when it changes."),
			workflowEntry(PRMonitorNotifyWorkflow, "Monitor a PR and emit a single human-friendly message when it changes.", false,
				`Emit "PR updated" message only when changed.`),
		}}, nil
	},
}

// workflowEntry is one recipe as Lobster's registry lists it; full adds
// the changesOnly and summaryOnly args that only github.pr.monitor takes.
func workflowEntry(name, description string, full bool, example string) *Object {
	prop := func(typ, desc string) *Object {
		return jsObject("type", typ, "description", desc)
	}
	props := jsObject(
		"repo", prop("string", "owner/repo (e.g. openclaw/openclaw)"),
		"pr", prop("number", "Pull request number"),
		"key", prop("string", "Optional state key override."),
	)
	if full {
		props.Set("changesOnly", prop("boolean", "If true, suppress output when unchanged."))
		props.Set("summaryOnly", prop("boolean", "If true, return only a compact change summary (smaller output)."))
	}
	return jsObject(
		"name", name,
		"description", description,
		"argsSchema", jsObject("type", "object", "properties", props, "required", []any{"repo", "pr"}),
		"examples", []any{jsObject(
			"args", jsObject("repo", "openclaw/openclaw", "pr", 1152.0),
			"description", example,
		)},
		"sideEffects", []any{},
	)
}

// jsObject builds an *Object from key, value pairs, in their order; an
// undefined value is left out, as JSON.stringify leaves it out.
func jsObject(kv ...any) *Object {
	o := NewObject(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != undefined {
			o.Set(kv[i].(string), kv[i+1])
		}
	}
	return o
}

// WorkflowRun is a parsed workflows.run stage: which recipe, and its args
// as Lobster reads them from --args-json.
type WorkflowRun struct {
	// Name is PRMonitorWorkflow or PRMonitorNotifyWorkflow.
	Name string
	// Key is the state key the PR's last seen state is kept under:
	// args.key, else "github.pr:REPO#PR".
	Key string
	// GhArgs are the arguments gh is run with (without "gh").
	GhArgs []string

	repo, pr, key            any
	changesOnly, summaryOnly bool
}

// ParseWorkflowRun reads a workflows.run stage's flags, --name N (or the
// first positional word) and --args-json J, with Lobster's checks and
// messages, in Lobster's order: no name, an unknown name, JSON that does
// not parse, then a missing repo or pr.
func ParseWorkflowRun(args StageArgs) (*WorkflowRun, error) {
	name, ok := args.Named["name"]
	if !ok && len(args.Positional) > 0 {
		name, ok = args.Positional[0], true
	}
	if !ok || !truthy(name) {
		return nil, errors.New("workflows.run requires --name")
	}
	w := &WorkflowRun{Name: jsString(name)}
	if w.Name != PRMonitorWorkflow && w.Name != PRMonitorNotifyWorkflow {
		//lint:ignore ST1005 Lobster's message
		return nil, fmt.Errorf("Unknown workflow: %s", w.Name)
	}
	var wargs any = NewObject(0)
	if raw := args.Named["args-json"]; truthy(raw) {
		v, err := DecodeJSON([]byte(jsString(raw)))
		if err != nil {
			return nil, errors.New("workflows.run --args-json must be valid JSON")
		}
		wargs = v
	}
	if wargs == nil && w.Name == PRMonitorWorkflow {
		// The notify recipe spreads its args into a new object, so only
		// the plain monitor reads a member of null.
		//lint:ignore ST1005 Lobster's message
		return nil, errors.New("Cannot read properties of null (reading 'repo')")
	}
	w.repo, w.pr = member(wargs, "repo"), member(wargs, "pr")
	if !truthy(w.repo) || !truthy(w.pr) {
		return nil, errors.New("github.pr.monitor requires args.repo and args.pr")
	}
	w.key = member(wargs, "key")
	if w.key == nil || w.key == undefined {
		w.key = "github.pr:" + jsString(w.repo) + "#" + jsString(w.pr)
	}
	w.Key = jsString(w.key)
	notify := w.Name == PRMonitorNotifyWorkflow
	w.changesOnly = notify || truthy(member(wargs, "changesOnly"))
	w.summaryOnly = notify || truthy(member(wargs, "summaryOnly"))
	w.GhArgs = []string{"pr", "view", jsString(w.pr), "--repo", jsString(w.repo), "--json", prFields}
	return w, nil
}
