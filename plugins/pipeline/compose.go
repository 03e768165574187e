package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// A composite step handler (parallel, for_each, workflow) returns the
// step's result when it is done; failErr (with the task it failed on, if
// any) when the step failed, for on_error; err for a host error. With all
// of them nil the step waits: the handler already wrote what the pass
// learned and created any tasks.

// parallel runs step s's branches at once (lobster-format §7.5): a run:
// branch is one task, keyed "<flow id>:<step id>/<branch id>:0"; a
// pipeline: branch is a pipeline whose exec stages are tasks keyed
// "<flow id>:<step id>/<branch id>/stage<N>:0".
func (r *run) parallel(ctx context.Context, fr *frame, s *flows.Step) (res *flows.StepResult, failTask string, failErr, err error) {
	p := s.Parallel
	id := fr.prefix + s.ID
	runs := make([]branchRun, len(p.Branches))
	var missing []sdk.TaskRequest
	active := false
	for i := range p.Branches {
		b := &p.Branches[i]
		br, err := r.branch(ctx, fr, s, b)
		switch {
		case br.hostErr != nil:
			return nil, "", nil, br.hostErr
		case err != nil:
			return nil, "", fmt.Errorf("parallel branch %s: %w", b.ID, err), nil
		}
		runs[i] = br
		if br.req != nil {
			missing = append(missing, *br.req)
		}
		active = active || !br.done
	}
	if p.Wait == "any" {
		// The first branch to settle wins, as Promise.race does in
		// Lobster: the earliest to end, then the first in file order; a
		// fast failure fails the step. The others are cancelled and their
		// results ignored.
		win := -1
		for i, br := range runs {
			if br.done && (win < 0 || br.ended.Before(runs[win].ended)) {
				win = i
			}
		}
		if win >= 0 {
			// The race is decided: stop the losers, as Lobster aborts them.
			for _, br := range runs {
				if t := br.running; t != nil && !t.CancelRequested() {
					if _, err := r.host.CancelTask(ctx, t.ID); err != nil && !errors.Is(err, sdk.ErrTerminal) {
						return nil, "", nil, err
					}
				}
			}
			if e := runs[win].err; e != nil {
				//lint:ignore ST1005 the reference's message
				return nil, runs[win].failTask, fmt.Errorf("Parallel branch failed: %w", e), nil
			}
			b := runs[win].res
			r.set(fr, b.ID, b)
			out := parallelResult(s, []flows.StepResult{b})
			return &out, "", nil, nil
		}
	}
	switch {
	case len(missing) > 0:
		return nil, "", nil, r.create(ctx, id, missing...)
	case active:
		return nil, "", nil, r.save(ctx, id)
	}
	for _, br := range runs {
		if br.err != nil {
			//lint:ignore ST1005 the reference's message
			return nil, br.failTask, fmt.Errorf("Parallel branch failed: %w", br.err), nil
		}
	}
	results := make([]flows.StepResult, len(runs))
	for i, br := range runs {
		results[i] = br.res
		r.set(fr, br.res.ID, br.res)
	}
	out := parallelResult(s, results)
	return &out, "", nil, nil
}

// branchRun is where one parallel branch stands in a pass: done (with
// its result or failure, and when it ended), or waiting for a task to be
// created (req) or to end (running).
type branchRun struct {
	done     bool
	res      flows.StepResult
	err      error
	failTask string
	ended    time.Time
	req      *sdk.TaskRequest
	running  *sdk.Task
	hostErr  error // a write of the flow failed: the pass ends
}

// branch brings branch b of parallel step s as far as it goes. It fails
// when a run: branch's task cannot be specified (its stdin does not
// resolve).
func (r *run) branch(ctx context.Context, fr *frame, s *flows.Step, b *flows.Branch) (branchRun, error) {
	id := fr.prefix + s.ID + "/" + b.ID
	env, cwd := r.taskEnv(fr, s, fr.results, b.Env), r.cwd(fr, s.Cwd, b.Cwd)
	if b.Pipeline != "" {
		pp := &pipe{r: r, fr: fr, s: s, id: id, name: b.ID, results: fr.results, env: env, cwd: cwd, timeoutMs: s.Parallel.TimeoutMs, retry: s.Retry}
		res, err := pp.exec(ctx, b.Pipeline, b.Stdin)
		switch {
		case pp.hostErr != nil:
			return branchRun{hostErr: pp.hostErr}, nil
		case err != nil:
			return branchRun{done: true, err: err, failTask: pp.failTask, ended: pp.ended}, nil
		case res != nil:
			return branchRun{done: true, res: *res, ended: pp.ended}, nil
		}
		return branchRun{req: pp.req, running: pp.running}, nil
	}
	key := taskKey(r.flow.ID, id, 0)
	if t, ok := r.tasks[key]; ok {
		if !t.Status.Terminal() {
			return branchRun{running: t}, nil
		}
		res, err := taskResult(b.ID, s.Parallel.TimeoutMs, t)
		return branchRun{done: true, res: res, err: err, failTask: t.ID, ended: t.EndedAt}, nil
	}
	spec, err := r.taskSpec(fr, fr.results, b.Run, b.Stdin, env, cwd, s.Parallel.TimeoutMs, s.Retry)
	if err != nil {
		return branchRun{}, err
	}
	return branchRun{req: &sdk.TaskRequest{FlowID: r.flow.ID, IdempotencyKey: key, Label: id, Spec: spec}}, nil
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

// forEach runs step s's sub-steps for every item of its array, each
// item's sub-steps in order (lobster-format §7.4). The items of a batch
// run at once: their next tasks are created in one Advance (one commit),
// and the gateway dispatches them up to its cap on running tasks. Without
// batch_size every item is one batch; with it, batch after batch, each
// item of a later batch sleeping pause_ms first, so batch_size: 1 runs the
// items one after another as Lobster does. A failed item fails the step
// once its batch's running items have ended; no later item starts. A
// sub-step's task has the key "<flow id>:<step id>/<sub-step id>:<item
// index>", so a pass repeated after a crash creates no item twice.
func (r *run) forEach(ctx context.Context, fr *frame, s *flows.Step) (res *flows.StepResult, failTask string, failErr, err error) {
	fe := s.ForEach
	id := fr.prefix + s.ID
	items, err := forEachItems(fr, s)
	if err != nil {
		return nil, "", err, nil
	}
	batch := fe.BatchSize
	if batch <= 0 {
		batch = max(len(items), 1)
	}
	rows := make([]any, 0, len(items))
	for start := 0; start < len(items); start += batch {
		var (
			reqs   []sdk.TaskRequest
			active bool
			failed *loopItem
			count  = sdk.NodeItems{Total: len(items)}
		)
		for i := start; i < min(start+batch, len(items)); i++ {
			it := r.loopItem(ctx, fr, s, items[i], i, start > 0)
			switch {
			case it.hostErr != nil:
				return nil, "", nil, it.hostErr
			case it.failErr != nil:
				count.Failed++
				if failed == nil {
					failed = &it
				}
			case it.req != nil:
				count.Running++
				reqs = append(reqs, *it.req)
			case it.active:
				count.Running++
				active = true
			default:
				rows = append(rows, it.row)
			}
		}
		count.Done = len(rows)
		r.countLoop(fr, s.ID, count)
		switch {
		case failed != nil && !active:
			return nil, failed.failTask, failed.failErr, nil
		case failed != nil:
			// Let the batch's running tasks end; start nothing new.
			return nil, "", nil, r.save(ctx, id)
		case len(reqs) > 0:
			return nil, "", nil, r.create(ctx, id, reqs...)
		case active:
			return nil, "", nil, r.save(ctx, id)
		}
	}
	text := jsonText(rows)
	return &flows.StepResult{ID: s.ID, Stdout: &text, JSON: rows, HasJSON: true}, "", nil, nil
}

// loopItem is where one for_each item stands: failed, with a task to
// create, with a task running, or done with its row.
type loopItem struct {
	row      *flows.Object
	req      *sdk.TaskRequest
	active   bool
	ran      bool  // a sub-step of the item has a task
	hostErr  error // a write of the flow failed: the pass ends
	failTask string
	failErr  error
}

// loopItem walks the sub-steps of item i of step s. The item and index
// are bound as the results of item_var and index_var; each sub-step sees
// the results of the sub-steps before it for the same item. pause says the
// item is in a batch after the first: its first task sleeps pause_ms
// before it runs.
func (r *run) loopItem(ctx context.Context, fr *frame, s *flows.Step, item any, i int, pause bool) loopItem {
	fe := s.ForEach
	scoped := maps.Clone(fr.results)
	scoped[fe.ItemVar] = valueResult(fe.ItemVar, item)
	scoped[fe.IndexVar] = valueResult(fe.IndexVar, float64(i))
	// A row's keys are in Lobster's order: the item, the index, then
	// each sub-step's value.
	row := flows.NewObject(2 + len(fe.Steps))
	row.Set(fe.ItemVar, item)
	row.Set(fe.IndexVar, float64(i))
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
		var (
			res flows.StepResult
			it  loopItem
		)
		if sub.Pipeline != "" {
			res, it = r.loopPipe(ctx, fr, s, sub, scoped, i, pause && first)
			first = first && !it.ran
		} else {
			res, it = r.loopRun(fr, s, sub, scoped, i, pause && first)
			first = false
		}
		switch {
		case it.hostErr != nil, it.req != nil, it.active:
			return it
		case it.failErr != nil:
			return fail(it.failTask, it.failErr)
		}
		scoped[sub.ID] = res
		switch {
		case res.HasJSON && res.JSON != nil:
			row.Set(sub.ID, res.JSON)
		case res.Stdout != nil:
			row.Set(sub.ID, *res.Stdout)
		}
	}
	return loopItem{row: row}
}

// loopRun brings run: sub-step sub of item i as far as it goes: its
// result, or where it stands (see loopItem). pause makes a task it
// creates sleep pause_ms first.
func (r *run) loopRun(fr *frame, s, sub *flows.Step, scoped map[string]flows.StepResult, i int, pause bool) (flows.StepResult, loopItem) {
	label := fr.prefix + s.ID + "/" + sub.ID
	key := taskKey(r.flow.ID, label, i)
	t, ok := r.tasks[key]
	if !ok {
		spec, err := r.taskSpec(fr, scoped, sub.Run, sub.Stdin, r.taskEnv(fr, s, scoped, sub.Env), r.cwd(fr, s.Cwd, sub.Cwd), sub.TimeoutMs, sub.Retry)
		if err != nil {
			return flows.StepResult{}, loopItem{failErr: err}
		}
		if pause && s.ForEach.PauseMs > 0 {
			pauseFirst(&spec, s.ForEach.PauseMs)
		}
		return flows.StepResult{}, loopItem{req: &sdk.TaskRequest{FlowID: r.flow.ID, IdempotencyKey: key, Label: fmt.Sprintf("%s[%d]", label, i), Spec: spec}}
	}
	if !t.Status.Terminal() {
		return flows.StepResult{}, loopItem{active: true}
	}
	res, err := taskResult(sub.ID, sub.TimeoutMs, t)
	if err != nil {
		return res, loopItem{failTask: t.ID, failErr: err}
	}
	return res, loopItem{}
}

// loopPipe brings pipeline: sub-step sub of item i as far as it goes, as
// loopRun does a run: one. Its exec stages' tasks are keyed
// "<flow id>:<step id>/<sub-step id>/stage<N>:<i>". Its approve and ask
// stages fail, as in Lobster: gates belong in a step after the loop.
func (r *run) loopPipe(ctx context.Context, fr *frame, s, sub *flows.Step, scoped map[string]flows.StepResult, i int, pause bool) (flows.StepResult, loopItem) {
	p := &pipe{
		r: r, fr: fr, s: s, id: fr.prefix + s.ID + "/" + sub.ID, name: sub.ID, iteration: i, results: scoped,
		env: r.taskEnv(fr, s, scoped, sub.Env), cwd: r.cwd(fr, s.Cwd, sub.Cwd), timeoutMs: sub.TimeoutMs, retry: sub.Retry,
	}
	if pause {
		p.pauseMs = s.ForEach.PauseMs
	}
	res, err := p.exec(ctx, sub.Pipeline, sub.Stdin)
	switch {
	case p.hostErr != nil:
		return flows.StepResult{}, loopItem{hostErr: p.hostErr}
	case err != nil:
		return flows.StepResult{}, loopItem{failTask: p.failTask, failErr: err, ran: p.ran}
	case res != nil:
		return *res, loopItem{ran: p.ran}
	}
	return flows.StepResult{}, loopItem{req: p.req, active: p.running != nil, ran: p.ran}
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
	if err := r.need(child, true); err != nil {
		return nil, "", err, nil
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

// jsonText is v as JSON.stringify writes it (flows.Stringify): objects'
// keys in their order, maps' sorted.
func jsonText(v any) string { return flows.Stringify(v) }
