package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// run is one pass over a flow's workflow, for one event. Every pass ends
// in at most one guarded write of the flow, made with the revision the
// pass read: an Advance when it starts tasks (the flow and its tasks in
// one transaction), else an update, a park or an end (plus a cancel
// request after it).
type run struct {
	opts Options
	host sdk.Host
	flow *sdk.Flow
	// ack is the Seq of the event the pass handles; the Advance that
	// ends the pass acknowledges it (sdk.AdvanceRequest.AckSeq).
	ack   int64
	wf    *flows.Workflow
	st    *state
	args  map[string]any
	tasks map[string]*sdk.Task // by idempotency key
	top   *frame
	// stages are the executable stages on the stage path, listed once
	// per pass (see executableStages).
	stages []ExecutableStage
	// plugStages are the stages other plugins provide, listed once per
	// pass when a pipeline needs one (see loadPluginStages).
	plugStages []sdk.Stage
	files      files
	// workflows loads the flow's workflow file, results keeps the
	// results the last pass decoded, looks the plan's looks (see
	// controller).
	workflows *flows.Cache
	results   *resultMemo
	looks     *lookMemo
	// loops are the item counts of the top-level for_each steps the pass
	// walked, for the plan (see countLoop).
	loops map[string]sdk.NodeItems
}

// frame is one workflow being walked: the flow's own (prefix "") or a
// sub-workflow run inline by a workflow step (prefix "<step id>>", nested
// ones "<step id>><sub step id>>"). A frame's step results are kept in
// state.results under prefix+id, and its tasks' keys and labels carry the
// prefix too.
type frame struct {
	wf      *flows.Workflow
	args    map[string]any
	prefix  string
	results map[string]flows.StepResult // by unprefixed step id
	chain   []string                    // the executing workflow files, outermost first
	env     map[string]string           // resolved env inherited from the calling step
	cwd     string                      // the directory steps run in by default
}

func (fr *frame) isTop() bool { return fr.prefix == "" }

// set records the result of the frame's step id.
func (r *run) set(fr *frame, id string, res flows.StepResult) {
	fr.results[id] = res
	r.st.setResult(fr.prefix+id, res)
}

// childError is a failure inside a sub-workflow that its on_error did not
// absorb: it fails the workflow step that runs the sub-workflow.
type childError struct {
	taskID string
	err    error
}

func (e childError) Error() string { return e.err.Error() }

// advance walks the steps in order, skipping those already done, and
// stops at the first one that must wait (a running task, a gate) or that
// ends the flow; after the last step it finishes the flow with the output.
func (r *run) advance(ctx context.Context) error {
	var err error
	if r.st, err = readState(r.flow.State, r.files, r.results.of(r.flow.ID)); err != nil {
		return r.fail(ctx, "", "", err.Error())
	}
	r.results.keep(r.flow.ID, r.st.decoded)
	r.st.outputs = &taskOutputs{list: func(id string) ([]*sdk.Task, error) { return r.host.ListTasks(ctx, id) },
		flows: []string{r.flow.ID, r.flow.SourceFlowID}}
	if r.wf, err = r.st.workflow(r.workflows); err != nil {
		return r.fail(ctx, "", "", err.Error())
	}
	if r.unstarted() {
		// Before any step runs: a workflow whose state could outgrow
		// its bound fails at once, not after its steps ran.
		if err := CheckBound(r.wf); err != nil {
			return r.fail(ctx, "", "", err.Error())
		}
	}
	if err := r.st.continued(r.flow.Continuation, r.wf); err != nil {
		return r.fail(ctx, "", "", fmt.Sprintf("prepare the continuation: %v", err))
	}
	r.args = flows.ResolveArgs(r.wf, r.st.Args)
	tasks, err := r.host.ListTasks(ctx, r.flow.ID)
	if err != nil {
		return err
	}
	r.tasks = make(map[string]*sdk.Task, len(tasks))
	for _, t := range tasks {
		r.tasks[t.IdempotencyKey] = t
	}
	base := r.st.Cwd
	if base == "" {
		base = filepath.Dir(r.wf.File)
	}
	r.top = &frame{wf: r.wf, args: r.args, results: r.st.Results, chain: []string{r.wf.File}, cwd: base, env: maps.Clone(r.st.Env)}
	stop, err := r.walk(ctx, r.top)
	if !stop && err == nil {
		err = r.finish(ctx)
	}
	if errors.Is(err, errStateTooLarge) || errors.Is(err, errWaitTooLarge) {
		// The state that fits stays as it was; the flow fails with why.
		r.st = nil
		return r.fail(ctx, r.flow.CurrentStep, "", err.Error())
	}
	return err
}

// unstarted reports whether no pass of the flow started a step yet: it
// has no result, and no step to stand at (every pass that starts a task
// or parks at a gate records the step), or it is a continuation not
// prepared yet. Only such a pass checks the workflow against the state's
// bound, so the check runs once per flow, not once per event of the
// first step.
func (r *run) unstarted() bool {
	if r.flow.Continuation != nil && r.st.raw[continuedKey] == nil {
		return true
	}
	return len(r.st.Results) == 0 && r.flow.CurrentStep == ""
}

// walk brings the steps of frame fr as far as they go; stop reports that
// the pass ends here. In a sub-workflow frame a failure that ends the
// sub-workflow is returned as a childError.
func (r *run) walk(ctx context.Context, fr *frame) (stop bool, err error) {
	for i := range fr.wf.Steps {
		if stop, err := r.step(ctx, fr, i); stop || err != nil {
			return stop, err
		}
	}
	return false, nil
}

// step brings step i of frame fr as far as it goes. stop reports that the
// pass ends here (the flow waits, or was ended).
func (r *run) step(ctx context.Context, fr *frame, i int) (stop bool, err error) {
	s := &fr.wf.Steps[i]
	_, done := fr.results[s.ID]
	if err := r.needFor(fr, s, done); err != nil {
		if !fr.isTop() {
			return true, childError{err: err}
		}
		return true, r.fail(ctx, s.ID, "", err.Error())
	}
	res := fr.results[s.ID]
	if done && res.Derived && res.Stdout == nil {
		if res, stop, err = r.rederive(ctx, fr, s, res); stop || err != nil {
			return stop, err
		}
	}
	if !done {
		ok, err := flows.EvalCondition(s.When, fr.results)
		if err != nil {
			if !fr.isTop() {
				return true, childError{err: fmt.Errorf("step %s: %w", s.ID, err)}
			}
			return true, r.fail(ctx, s.ID, "", fmt.Sprintf("step %s: %v", s.ID, err))
		}
		if !ok {
			r.set(fr, s.ID, flows.SkippedResult(s.ID))
			return false, nil
		}
		var (
			got            *flows.StepResult
			failTask       string
			failErr, hostE error
		)
		switch kind := s.Kind(); kind {
		case "parallel":
			got, failTask, failErr, hostE = r.parallel(ctx, fr, s)
		case "for_each":
			got, failTask, failErr, hostE = r.forEach(ctx, fr, s)
		case "workflow":
			got, failTask, failErr, hostE = r.subWorkflow(ctx, fr, s)
		case "pipeline":
			got, failTask, failErr, hostE = r.pipelineStep(ctx, fr, s)
		case "input":
			if !fr.isTop() {
				return true, childError{err: errHalted("input")}
			}
			return r.input(ctx, i)
		case "run":
			t, err := r.shell(ctx, fr, s)
			var stepErr stepError
			switch {
			case errors.As(err, &stepErr):
				failErr = stepErr.err
			case err != nil || t == nil || !t.Status.Terminal():
				return true, err
			default:
				v, err := taskResult(s.ID, s.TimeoutMs, t)
				got, failTask, failErr = &v, t.ID, err
			}
		default: // a gate over its stdin, executing nothing
			v, ok, err := flows.ResolveStdin(s.Stdin, fr.args, fr.results)
			if err != nil {
				return r.stepFailed(ctx, fr, s, "", err)
			}
			if !ok {
				v = nil
			}
			syn := flows.SyntheticResult(s.ID, v)
			got = &syn
		}
		switch {
		case hostE != nil:
			return true, hostE
		case failErr != nil:
			return r.stepFailed(ctx, fr, s, failTask, failErr)
		case got == nil:
			return true, nil
		}
		res = *got
		r.set(fr, s.ID, res)
	}
	if s.Approval == nil || !res.Succeeded() {
		return false, nil
	}
	if !fr.isTop() {
		return true, childError{err: errHalted("approval")}
	}
	if res.Approved != nil {
		if *res.Approved {
			return false, nil
		}
		return true, r.cancel(ctx, s.ID)
	}
	return r.approval(ctx, s, res)
}

// errHalted is the failure of a sub-workflow that reaches a gate: gates
// in sub-workflows are not supported (lobster-format §7.3).
func errHalted(kind string) error {
	return fmt.Errorf("sub-workflow halted for %s. Sub-workflow approval/input gates are not supported in composition", kind)
}

// stepError is a step that failed before its task could be created (its
// stdin did not resolve).
type stepError struct{ err error }

func (e stepError) Error() string { return e.err.Error() }

// shell returns the task of shell step s. When the step has none yet, it
// writes what the pass learned, creates the task and returns nil: the
// step waits for the task's task.finished. It also returns nil while the
// task is active.
func (r *run) shell(ctx context.Context, fr *frame, s *flows.Step) (*sdk.Task, error) {
	id := fr.prefix + s.ID
	key := taskKey(r.flow.ID, id, 0)
	if t, ok := r.tasks[key]; ok {
		if t.Status.Terminal() {
			return t, nil
		}
		return nil, r.save(ctx, id)
	}
	spec, err := r.taskSpec(fr, fr.results, s.Run, s.Stdin, r.taskEnv(fr, s, fr.results), r.cwd(fr, s.Cwd), s.TimeoutMs, s.Retry)
	if err != nil {
		return nil, stepError{err}
	}
	if r.st.Session != "" {
		spec.Session = &sdk.SessionSpec{Name: r.st.Session, Step: id, ResumePrompt: s.ResumePrompt, Fresh: s.Fresh, Check: r.st.SessionCheck}
	}
	return nil, r.create(ctx, id, sdk.TaskRequest{FlowID: r.flow.ID, IdempotencyKey: key, Label: id, Spec: spec})
}

// create writes what the pass learned, standing at step stepID, and
// creates the tasks (each idempotent by its key), in one Host.Advance: a
// step costs one commit, and the state that names a step's tasks is never
// written without them. The Advance ends the pass, so it also
// acknowledges the pass's event: the event costs no commit of its own.
func (r *run) create(ctx context.Context, stepID string, reqs ...sdk.TaskRequest) error {
	u, _, err := r.update(stepID, reqs)
	if err != nil {
		return err
	}
	res, err := r.host.Advance(ctx, r.flow.ID, r.flow.Revision, sdk.AdvanceRequest{Update: u, Tasks: reqs, AckSeq: r.ack})
	if err != nil {
		return err
	}
	r.flow = res.Flow
	return nil
}

// stepFailed applies step s's on_error policy to err: continue records
// the failure and goes on; skip_rest records it and skips the remaining
// steps of its workflow, which then finishes; stop (the default) fails the
// flow, or, inside a sub-workflow, the step that runs it. When the Host
// failed a read the pass needed, no step fails: the pass ends on that
// error (hostFailed).
func (r *run) stepFailed(ctx context.Context, fr *frame, s *flows.Step, taskID string, err error) (stop bool, _ error) {
	if err := r.hostFailed(); err != nil {
		return true, err // what failed the step may read well next time
	}
	switch s.OnError {
	case "continue":
		r.set(fr, s.ID, flows.FailedResult(s.ID, err))
		return false, nil
	case "skip_rest":
		r.set(fr, s.ID, flows.FailedResult(s.ID, err))
		for _, rest := range fr.wf.Steps {
			if _, ok := fr.results[rest.ID]; !ok {
				r.set(fr, rest.ID, flows.SkippedResult(rest.ID))
			}
		}
		return false, nil
	}
	if !fr.isTop() {
		return true, childError{taskID: taskID, err: fmt.Errorf("step %s failed: %w", s.ID, err)}
	}
	return true, r.fail(ctx, s.ID, taskID, fmt.Sprintf("step %s failed: %v", s.ID, err))
}

// decision returns the answer recorded at the gate at step: the one in
// the flow's Decisions, where the gateway records answers, else, for a
// flow a gateway of before Flow.Decisions answered, the one it wrote
// into the state (sdk.DecisionsKey): the controller reads its own old
// layout, so flows parked across an upgrade go on.
func (r *run) decision(step string) (sdk.Decision, bool) {
	if d, ok := r.flow.Decisions[step]; ok {
		return d, true
	}
	d, ok := r.st.Decisions[step]
	return d, ok
}

// approval decides the approval gate of step s from the recorded decision,
// or parks the flow at it. An approval by someone the gate does not accept
// keeps the flow waiting, with the reason in the wait's error.
func (r *run) approval(ctx context.Context, s *flows.Step, res flows.StepResult) (stop bool, _ error) {
	g := approvalGate(r.flow.ID, s, res, r.env(r.top, s, r.st.Results), r.fill)
	d, ok := r.decision(s.ID)
	switch {
	case !ok:
		return true, r.wait(ctx, g)
	case d.Approved == nil:
		g.Error = fmt.Sprintf("the decision at step %s neither approves nor denies; answer with approve or deny", s.ID)
		return true, r.wait(ctx, g)
	case *d.Approved:
		if err := checkApprover(s, g, d.By); err != nil {
			g.Error = err.Error()
			return true, r.wait(ctx, g)
		}
	}
	res.Approved, res.ApprovedBy, res.InitiatedBy = d.Approved, d.By, g.InitiatedBy
	r.st.setResult(s.ID, res)
	if *d.Approved {
		return false, nil
	}
	return true, r.cancel(ctx, s.ID)
}

// input decides the input gate of step i from the recorded response, or
// parks the flow at it. A response the schema rejects keeps the flow
// waiting, with the reason in the wait's error.
func (r *run) input(ctx context.Context, i int) (stop bool, _ error) {
	s := &r.wf.Steps[i]
	subject, err := r.subject(i)
	if err != nil {
		return r.stepFailed(ctx, r.top, s, "", err)
	}
	g := inputGate(r.flow.ID, s, subject, r.fill)
	d, ok := r.decision(s.ID)
	switch {
	case !ok:
		return true, r.wait(ctx, g)
	case d.Approved != nil && !*d.Approved:
		// The gateway denied the gate (gate-expired): the run ends as a
		// denied approval does.
		return true, r.cancel(ctx, s.ID)
	}
	var response any
	if len(d.Response) > 0 {
		// The state it came in is valid JSON, and so is the response.
		response, _ = flows.DecodeJSON(d.Response)
	}
	if err := flows.ValidateResponse(s.ID, s.Input.ResponseSchema, response); err != nil {
		g.Error = err.Error()
		return true, r.wait(ctx, g)
	}
	r.st.setResult(s.ID, flows.InputResult(s.ID, subject, response))
	return false, nil
}

// fill resolves the templates of a gate's text (${arg}, then
// $step.path refs) against the run's args and results, as a run:
// command's are.
func (r *run) fill(text string) string { return flows.ResolveTemplate(text, r.args, r.st.Results) }

// subject is what input step i asks about (lobster-format §9): its stdin
// when it has one, else the output of the last step before it that ran
// successfully (json, else response, else stdout), else null.
func (r *run) subject(i int) (any, error) {
	s := &r.wf.Steps[i]
	if err := r.st.loadAll(); err != nil {
		return nil, err
	}
	if s.Stdin != nil {
		v, _, err := flows.ResolveStdin(s.Stdin, r.args, r.st.Results)
		return v, err
	}
	for j := i - 1; j >= 0; j-- {
		prev, ok := r.st.Results[r.wf.Steps[j].ID]
		if !ok || !prev.Succeeded() {
			continue
		}
		switch {
		case prev.HasJSON && prev.JSON != nil:
			return prev.JSON, nil
		case prev.HasResponse && prev.Response != nil:
			return prev.Response, nil
		case prev.Stdout != nil:
			return *prev.Stdout, nil
		}
		return nil, nil
	}
	return nil, nil
}
