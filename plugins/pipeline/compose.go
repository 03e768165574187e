package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// A composite step handler (parallel, for_each, workflow) returns the
// step's result when it is done; failErr (with the task it failed on, if
// any) when the step failed, for on_error; err for a host error. With all
// of them nil the step waits: the handler already wrote what the pass
// learned and created any tasks.

// parallel runs step s's branches, each as one task created at once, with
// the key "<flow id>:<step id>/<branch id>:0" (lobster-format §7.5).
func (r *run) parallel(ctx context.Context, fr *frame, s *flows.Step) (res *flows.StepResult, failTask string, failErr, err error) {
	p := s.Parallel
	id := fr.prefix + s.ID
	tasks := make([]*sdk.Task, len(p.Branches))
	var missing []sdk.TaskRequest
	for i := range p.Branches {
		b := &p.Branches[i]
		key := taskKey(r.flow.ID, id+"/"+b.ID, 0)
		if t, ok := r.tasks[key]; ok {
			tasks[i] = t
			continue
		}
		spec, err := r.taskSpec(fr, fr.results, b.Run, b.Stdin, r.taskEnv(fr, s, fr.results, b.Env), r.cwd(fr, s.Cwd, b.Cwd), p.TimeoutMs, s.Retry)
		if err != nil {
			return nil, "", fmt.Errorf("parallel branch %s: %w", b.ID, err), nil
		}
		missing = append(missing, sdk.TaskRequest{FlowID: r.flow.ID, IdempotencyKey: key, Label: id + "/" + b.ID, Spec: spec})
	}
	if len(missing) > 0 {
		return nil, "", nil, r.create(ctx, id, missing...)
	}
	results := make([]flows.StepResult, len(tasks))
	errs := make([]error, len(tasks))
	active := false
	for i, t := range tasks {
		if !t.Status.Terminal() {
			active = true
			continue
		}
		results[i], errs[i] = taskResult(p.Branches[i].ID, p.TimeoutMs, t)
	}
	if p.Wait == "any" {
		// The first branch to settle wins, as Promise.race does in
		// Lobster: the earliest to end, then the first in file order; a
		// fast failure fails the step. The others are cancelled and their
		// results ignored.
		win := -1
		for i, t := range tasks {
			if t.Status.Terminal() && (win < 0 || t.EndedAt.Before(tasks[win].EndedAt)) {
				win = i
			}
		}
		if win >= 0 {
			// The race is decided: stop the losers, as Lobster aborts them.
			for _, t := range tasks {
				if t.Status.Terminal() || t.CancelRequested() {
					continue
				}
				if _, err := r.host.CancelTask(ctx, t.ID); err != nil && !errors.Is(err, sdk.ErrTerminal) {
					return nil, "", nil, err
				}
			}
		}
		if win >= 0 && errs[win] != nil {
			//lint:ignore ST1005 the reference's message
			return nil, tasks[win].ID, fmt.Errorf("Parallel branch failed: %w", errs[win]), nil
		}
		if win >= 0 {
			b := results[win]
			r.set(fr, b.ID, b)
			out := parallelResult(s, []flows.StepResult{b})
			return &out, "", nil, nil
		}
	}
	if active {
		return nil, "", nil, r.save(ctx, id)
	}
	for i, e := range errs {
		if e != nil {
			//lint:ignore ST1005 the reference's message
			return nil, tasks[i].ID, fmt.Errorf("Parallel branch failed: %w", e), nil
		}
	}
	for _, b := range results {
		r.set(fr, b.ID, b)
	}
	out := parallelResult(s, results)
	return &out, "", nil, nil
}

// parallelResult is the result of parallel step s from its branches'
// results: json maps each branch id to the branch's json (branches
// without one are left out, as JSON.stringify leaves out undefined),
// stdout is that json as text, or with wait any the winning branch's own
// stdout. A large one is kept by reference (see combined).
func parallelResult(s *flows.Step, branches []flows.StepResult) flows.StepResult {
	m := map[string]any{}
	for _, b := range branches {
		if b.HasJSON {
			m[b.ID] = b.JSON
		}
	}
	text := jsonText(m)
	out := flows.StepResult{ID: s.ID, Stdout: &text, JSON: m, HasJSON: true}
	if s.Parallel.Wait == "any" && len(branches) == 1 {
		out.Stdout = branches[0].Stdout
	}
	return combined(out)
}

// forEach runs step s's sub-steps for every item of its array, one item
// after another as Lobster does (lobster-format §7.4); batch_size only
// says where the pause_ms pauses go, between batches. A sub-step's task has the key
// "<flow id>:<step id>/<sub-step id>:<item index>".
func (r *run) forEach(ctx context.Context, fr *frame, s *flows.Step) (res *flows.StepResult, failTask string, failErr, err error) {
	fe := s.ForEach
	id := fr.prefix + s.ID
	items, err := forEachItems(fr, s)
	if err != nil {
		return nil, "", err, nil
	}
	batch := max(fe.BatchSize, 1)
	rows := make([]any, 0, len(items))
	for i, item := range items {
		it := r.loopItem(fr, s, item, i, i > 0 && i%batch == 0)
		switch {
		case it.failErr != nil:
			return nil, it.failTask, it.failErr, nil
		case it.req != nil:
			return nil, "", nil, r.create(ctx, id, *it.req)
		case it.active:
			return nil, "", nil, r.save(ctx, id)
		}
		rows = append(rows, it.row)
	}
	text := jsonText(rows)
	return &flows.StepResult{ID: s.ID, Stdout: &text, JSON: rows, HasJSON: true}, "", nil, nil
}

// loopItem is where one for_each item stands: failed, with a task to
// create, with a task running, or done with its row.
type loopItem struct {
	row      map[string]any
	req      *sdk.TaskRequest
	active   bool
	failTask string
	failErr  error
}

// loopItem walks the sub-steps of item i of step s. The item and index
// are bound as the results of item_var and index_var; each sub-step sees
// the results of the sub-steps before it for the same item. pause says the
// item begins a batch after the first: its first task sleeps pause_ms
// before it runs.
func (r *run) loopItem(fr *frame, s *flows.Step, item any, i int, pause bool) loopItem {
	fe := s.ForEach
	scoped := maps.Clone(fr.results)
	scoped[fe.ItemVar] = valueResult(fe.ItemVar, item)
	scoped[fe.IndexVar] = valueResult(fe.IndexVar, float64(i))
	row := map[string]any{fe.ItemVar: item, fe.IndexVar: float64(i)}
	first := true
	for j := range fe.Steps {
		sub := &fe.Steps[j]
		fail := func(taskID string, err error) loopItem {
			return loopItem{failTask: taskID, failErr: fmt.Errorf("for_each item %d, step %s: %w", i, sub.ID, err)}
		}
		ok, err := flows.EvalCondition(sub.When, scoped)
		if err != nil {
			return fail("", err)
		}
		if !ok {
			scoped[sub.ID] = flows.SkippedResult(sub.ID)
			continue
		}
		label := fr.prefix + s.ID + "/" + sub.ID
		key := taskKey(r.flow.ID, label, i)
		t, ok := r.tasks[key]
		if !ok {
			spec, err := r.taskSpec(fr, scoped, sub.Run, sub.Stdin, r.taskEnv(fr, s, scoped, sub.Env), r.cwd(fr, s.Cwd, sub.Cwd), sub.TimeoutMs, sub.Retry)
			if err != nil {
				return fail("", err)
			}
			if pause && first && fe.PauseMs > 0 {
				spec.Shell = "sleep " + strconv.FormatFloat(fe.PauseMs/1000, 'f', -1, 64) + "; " + spec.Shell
			}
			return loopItem{req: &sdk.TaskRequest{FlowID: r.flow.ID, IdempotencyKey: key, Label: fmt.Sprintf("%s[%d]", label, i), Spec: spec}}
		}
		first = false
		if !t.Status.Terminal() {
			return loopItem{active: true}
		}
		res, err := taskResult(sub.ID, sub.TimeoutMs, t)
		if err != nil {
			return fail(t.ID, err)
		}
		scoped[sub.ID] = res
		switch {
		case res.HasJSON && res.JSON != nil:
			row[sub.ID] = res.JSON
		case res.Stdout != nil:
			row[sub.ID] = *res.Stdout
		}
	}
	return loopItem{row: row}
}

// forEachItems resolves step s's for_each expression to its array: a
// "$step.path" ref is looked up; anything else is templated and parsed as
// JSON (a literal array such as '["a","b"]').
func forEachItems(fr *frame, s *flows.Step) ([]any, error) {
	expr := s.ForEach.Expr
	var (
		v     any
		found = true
	)
	if flows.IsStepRef(expr) {
		var err error
		if v, found, err = flows.LookupRef(expr, fr.results); err != nil {
			return nil, err
		}
	} else {
		text := flows.ResolveTemplate(expr, fr.args, fr.results)
		var ok bool
		if v, ok = flows.ParseJSON(text); !ok {
			v = text
		}
	}
	if a, ok := v.([]any); ok && found {
		return a, nil
	}
	//lint:ignore ST1005 the reference's message
	return nil, fmt.Errorf("Workflow step %s for_each: expected array, got %s", s.ID, jsTypeof(v, found))
}

// jsTypeof names v's type as JavaScript's typeof does.
func jsTypeof(v any, found bool) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		if !found {
			return "undefined"
		}
	}
	return "object"
}

// valueResult is the result a loop variable is seen as: v as json, and as
// stdout the string itself or v's JSON.
func valueResult(id string, v any) flows.StepResult {
	text, ok := v.(string)
	if !ok {
		text = jsonText(v)
	}
	return flows.StepResult{ID: id, Stdout: &text, JSON: v, HasJSON: true}
}

// subWorkflow runs step s's sub-workflow inline, as a frame whose results
// and tasks carry the prefix "<step id>>" (lobster-format §7.3). The
// sub-workflow gets the step's resolved workflow_args, runs with the
// step's env and directory, and its output becomes the step's result.
func (r *run) subWorkflow(ctx context.Context, fr *frame, s *flows.Step) (res *flows.StepResult, failTask string, failErr, err error) {
	sub := s.Sub
	if sub == nil {
		path := flows.ResolveTemplate(s.Workflow, fr.args, fr.results)
		if sub, err = flows.LoadSub(fr.wf, s, path, fr.chain); err != nil {
			return nil, "", err, nil
		}
		// Known only now, its steps count toward the state's bound.
		n, size := resultEntries(sub.Steps, fr.prefix+s.ID+">")
		if err := checkBound(r.wf, n, size); err != nil {
			return nil, "", fmt.Errorf("sub-workflow %s: %w", sub.File, err), nil
		}
	}
	if slices.Contains(fr.chain, sub.File) {
		//lint:ignore ST1005 the reference's message
		return nil, "", fmt.Errorf("Workflow step %s creates a cycle: %s is already being executed", s.ID, sub.File), nil
	}
	child := &frame{
		wf:      sub,
		args:    flows.ResolveArgs(sub, flows.ResolveWorkflowArgs(s, fr.args, fr.results)),
		prefix:  fr.prefix + s.ID + ">",
		results: map[string]flows.StepResult{},
		chain:   append(slices.Clone(fr.chain), sub.File),
		env:     r.env(fr, s, fr.results),
		cwd:     r.cwd(fr, s.Cwd),
	}
	for k, v := range r.st.Results {
		if rest, ok := strings.CutPrefix(k, child.prefix); ok {
			child.results[rest] = v
		}
	}
	stop, err := r.walk(ctx, child)
	var ce childError
	switch {
	case errors.As(err, &ce):
		return nil, ce.taskID, ce.err, nil
	case err != nil || stop:
		return nil, "", nil, err
	}
	out := workflowResult(s.ID, flows.Output(sub, child.results))
	return &out, "", nil, nil
}

// workflowResult is a workflow step's result from the sub-workflow's
// output: json is the one item, or the array of them; stdout is json as
// text (a string as it is), "" for no output. A large one is kept by
// reference (see combined).
func workflowResult(id string, output []any) flows.StepResult {
	var v any = output
	if len(output) == 1 {
		v = output[0]
	}
	text := ""
	if len(output) > 0 {
		var ok bool
		if text, ok = v.(string); !ok {
			text = jsonText(v)
		}
	}
	return combined(flows.StepResult{ID: id, Stdout: &text, JSON: v, HasJSON: true})
}

// jsonText is v as compact JSON, without HTML escaping (as
// JSON.stringify). Maps have sorted keys.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}
