package flows

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

const maxTimeoutMs = 2147483647

// pipelineUnsupported is the message for typed pipeline: steps, which
// arrive with the typed-pipeline issue (lobster-format §14).
const pipelineUnsupported = "pipeline: steps (typed Lobster pipelines, lobster-format §14) are not supported yet; use run: with a shell command"

func (d *decoder) workflow(root *yaml.Node) *Workflow {
	o, ok := asObject(root)
	if !ok {
		d.errAt(deref(root), "", "Workflow file must be a JSON/YAML object")
		return nil
	}
	wf := &Workflow{File: d.file}
	if v, ok := o.get("name"); ok {
		wf.Name, _ = str(v)
	}
	if v, ok := o.get("description"); ok {
		wf.Description, _ = str(v)
	}
	if v, ok := o.get("args"); ok {
		wf.Args = d.args(v)
	}
	if v, ok := o.get("env"); ok {
		wf.Env = stringMap(v)
	}
	if v, ok := o.get("cwd"); ok {
		wf.Cwd, _ = str(v)
	}
	if v, ok := o.get("cost_limit"); ok {
		wf.CostLimit = d.costLimit(o, v)
	}
	v, ok := o.get("steps")
	seq := deref(v)
	if !ok || seq.Kind != yaml.SequenceNode || len(seq.Content) == 0 {
		d.errAt(o.at("steps"), "steps", "Workflow file requires a non-empty steps array")
		return wf
	}
	for i, n := range seq.Content {
		wf.Steps = append(wf.Steps, d.step(n, fmt.Sprintf("steps[%d]", i)))
	}
	d.checkIDs(wf)
	d.checkRefs(wf)
	return wf
}

func (d *decoder) args(n *yaml.Node) []Arg {
	m := deref(n)
	if m.Kind != yaml.MappingNode {
		return nil
	}
	var args []Arg
	for i := 0; i+1 < len(m.Content); i += 2 {
		a := Arg{Name: deref(m.Content[i]).Value}
		if o, ok := asObject(m.Content[i+1]); ok {
			if v, present := o.values["default"]; present {
				a.Default, a.HasDefault = d.value(v), true
			}
			if v, ok := o.get("description"); ok {
				a.Description, _ = str(v)
			}
		}
		args = append(args, a)
	}
	return args
}

func (d *decoder) costLimit(parent *object, n *yaml.Node) *CostLimit {
	o, ok := asObject(n)
	if !ok {
		d.errAt(parent.at("cost_limit"), "cost_limit", "cost_limit must be an object")
		return nil
	}
	c := &CostLimit{}
	if f, ok := nonNegative(o.values["max_usd"]); ok {
		c.MaxUSD = f
	} else {
		d.errAt(o.at("max_usd"), "cost_limit.max_usd", "cost_limit.max_usd must be a non-negative number")
	}
	if v, ok := o.get("action"); ok {
		if s, _ := str(v); s == "warn" || s == "stop" {
			c.Action = s
		} else {
			d.errAt(o.at("action"), "cost_limit.action", `cost_limit.action must be "warn" or "stop"`)
		}
	}
	return c
}

// stepCtx carries what a step decoder needs to phrase its messages.
type stepCtx struct {
	o     *object
	key   string // e.g. "steps[2]"
	label string // "Workflow step <id>"
}

func (c *stepCtx) k(name string) string { return c.key + "." + name }

func (d *decoder) fail(c *stepCtx, key, format string, args ...any) {
	d.errAt(c.o.at(key), c.k(key), c.label+" "+format, args...)
}

// step decodes one top-level step.
func (d *decoder) step(n *yaml.Node, key string) Step {
	o, ok := asObject(n)
	if !ok {
		d.errAt(deref(n), key, "Workflow step must be an object")
		return Step{}
	}
	s := Step{Line: o.n.Line, Column: o.n.Column}
	if id, ok := str(o.values["id"]); ok && id != "" {
		s.ID = id
	} else {
		d.errAt(o.at("id"), key+".id", "Workflow step requires an id")
	}
	c := &stepCtx{o: o, key: key, label: "Workflow step " + cmpOr(s.ID, key)}
	d.remember(o, "id", key+".id")
	d.remember(o, "for_each", key+".for_each")
	d.common(c, &s)

	execs := d.execKeys(c, &s, true)
	if v, ok := o.get("approval"); ok {
		s.Approval = d.approval(c, v)
	}
	if v, ok := o.get("input"); ok {
		s.Input = d.input(c, v)
	}
	if _, ok := o.get("for_each"); ok {
		d.forEach(c, &s, execs)
	} else if len(execs) > 1 {
		d.fail(c, execs[1], "can only define one of run, command, pipeline, workflow, parallel, or for_each")
	}
	if _, ok := o.get("input"); ok {
		if len(execs) > 0 || s.ForEach != nil {
			d.fail(c, "input", "input steps cannot define run, command, pipeline, workflow, parallel, or for_each")
		}
		if _, ok := o.get("approval"); ok {
			d.fail(c, "input", "cannot define both approval and input")
		}
	}
	if len(execs) == 0 && s.ForEach == nil && s.Approval == nil && s.Input == nil {
		if _, hasFE := o.get("for_each"); !hasFE {
			if _, hasIn := o.get("input"); !hasIn {
				d.errAt(o.n, key, "%s requires run, command, pipeline, workflow, parallel, for_each, approval, or input", c.label)
			}
		}
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// common decodes the keys every step kind shares.
func (d *decoder) common(c *stepCtx, s *Step) {
	o := c.o
	for _, k := range []string{"when", "condition", "stdin"} {
		d.remember(o, k, c.k(k))
	}
	s.OnError, s.Retry = "stop", DefaultRetry()
	if v, ok := o.get("env"); ok {
		s.Env = stringMap(v)
	}
	if v, ok := o.get("cwd"); ok {
		s.Cwd, _ = str(v)
	}
	if v, ok := o.get("stdin"); ok {
		s.Stdin = d.value(v)
	}
	whenKey := "when"
	v, ok := o.get("when")
	if !ok {
		whenKey = "condition"
		v, ok = o.get("condition")
	}
	if ok {
		s.When = d.value(v)
		switch w := s.When.(type) {
		case bool:
		case string:
			if _, err := parseCondition(w); err != nil {
				d.fail(c, whenKey, "%s: %v", whenKey, err)
			}
		default:
			d.fail(c, whenKey, "%s: Unsupported condition type (use a boolean or an expression string)", whenKey)
		}
	}
	if v, ok := o.get("timeout_ms"); ok {
		if t, ok := positiveInt(v, maxTimeoutMs); ok {
			s.TimeoutMs = t
		} else {
			d.fail(c, "timeout_ms", "timeout_ms must be a positive integer between 1 and 2147483647")
		}
	}
	if v, ok := o.get("on_error"); ok {
		switch e, _ := str(v); e {
		case "stop", "continue", "skip_rest":
			s.OnError = e
		default:
			d.fail(c, "on_error", `on_error must be "stop", "continue", or "skip_rest"`)
		}
	}
	if v, ok := o.get("retry"); ok {
		d.retry(c, v, &s.Retry)
	}
}

func (d *decoder) retry(c *stepCtx, n *yaml.Node, r *Retry) {
	o, ok := asObject(n)
	if !ok {
		d.fail(c, "retry", "retry must be an object")
		return
	}
	rc := &stepCtx{o: o, key: c.k("retry"), label: c.label}
	if v, ok := o.get("max"); ok {
		if m, ok := positiveInt(v, maxTimeoutMs); ok {
			r.Max = m
		} else {
			d.fail(rc, "max", "retry.max must be a positive integer")
		}
	}
	if v, ok := o.get("backoff"); ok {
		if b, _ := str(v); b == "fixed" || b == "exponential" {
			r.Backoff = b
		} else {
			d.fail(rc, "backoff", `retry.backoff must be "fixed" or "exponential"`)
		}
	}
	for _, k := range []string{"delay_ms", "max_delay_ms"} {
		if v, ok := o.get(k); ok {
			f, ok := nonNegative(v)
			if !ok {
				d.fail(rc, k, "retry.%s must be a finite non-negative number", k)
			} else if k == "delay_ms" {
				r.DelayMs = f
			} else {
				r.MaxDelayMs = f
			}
		}
	}
	if v, ok := o.get("jitter"); ok {
		if b, ok := boolean(v); ok {
			r.Jitter = b
		} else {
			d.fail(rc, "jitter", "retry.jitter must be a boolean")
		}
	}
}

// execKeys decodes run/command/pipeline and, for top-level steps,
// workflow and parallel; it returns the execution keys present, in
// reference order (run and command count once).
func (d *decoder) execKeys(c *stepCtx, s *Step, top bool) []string {
	o := c.o
	var execs []string
	for _, k := range []string{"run", "command"} {
		v, ok := o.get(k)
		if !ok {
			continue
		}
		r, isStr := str(v)
		switch {
		case !isStr:
			d.fail(c, k, "%s must be a string", k)
		case r == "":
		case s.Run == "":
			s.Run = r
			execs = append(execs, k)
		}
	}
	if v, ok := o.get("pipeline"); ok {
		if p, isStr := str(v); !isStr {
			d.fail(c, "pipeline", "pipeline must be a string")
		} else if p != "" {
			d.fail(c, "pipeline", pipelineUnsupported)
			execs = append(execs, "pipeline")
		}
	}
	if !top {
		return execs
	}
	if v, ok := o.get("workflow"); ok {
		p, isStr := str(v)
		switch {
		case !isStr:
			d.fail(c, "workflow", "workflow must be a string (file path)")
		case strings.TrimSpace(p) == "":
			d.fail(c, "workflow", "workflow path cannot be blank")
		default:
			s.Workflow = p
			execs = append(execs, "workflow")
		}
	}
	if v, ok := o.get("workflow_args"); ok {
		if m, isMap := d.value(v).(map[string]any); isMap {
			s.WorkflowArgs = m
		} else {
			d.fail(c, "workflow_args", "workflow_args must be a plain object")
		}
	}
	if v, ok := o.get("parallel"); ok {
		s.Parallel = d.parallel(c, s, v)
		execs = append(execs, "parallel")
	}
	return execs
}

func (d *decoder) parallel(c *stepCtx, s *Step, n *yaml.Node) *Parallel {
	o, ok := asObject(n)
	if !ok {
		d.fail(c, "parallel", "parallel must be an object")
		return &Parallel{Wait: "all"}
	}
	pc := &stepCtx{o: o, key: c.k("parallel"), label: c.label}
	p := &Parallel{Wait: "all"}
	if v, ok := o.get("wait"); ok {
		if w, _ := str(v); w == "all" || w == "any" {
			p.Wait = w
		} else {
			d.fail(pc, "wait", `parallel wait must be "all" or "any"`)
		}
	}
	if v, ok := o.get("timeout_ms"); ok {
		if t, ok := positiveInt(v, maxTimeoutMs); ok {
			p.TimeoutMs = t
		} else {
			d.fail(pc, "timeout_ms", "parallel timeout_ms must be a positive integer between 1 and 2147483647")
		}
	}
	v, _ := o.get("branches")
	seq := deref(v)
	if seq == nil || seq.Kind != yaml.SequenceNode || len(seq.Content) == 0 {
		d.fail(pc, "branches", "parallel requires a non-empty branches array")
		return p
	}
	seen := map[string]bool{}
	for i, bn := range seq.Content {
		key := fmt.Sprintf("%s.branches[%d]", pc.key, i)
		bo, ok := asObject(bn)
		if !ok {
			d.errAt(deref(bn), key, "%s parallel branches must be objects", c.label)
			continue
		}
		b := Branch{Line: bo.n.Line, Column: bo.n.Column}
		d.remember(bo, "id", key+".id")
		id, ok := str(bo.values["id"])
		switch {
		case !ok || id == "":
			d.errAt(bo.at("id"), key+".id", "%s parallel branch requires an id", c.label)
		case id == s.ID:
			d.errAt(bo.at("id"), key+".id", "%s parallel branch id cannot match the step id", c.label)
		case seen[id]:
			d.errAt(bo.at("id"), key+".id", "%s duplicate parallel branch id: %s", c.label, id)
		}
		seen[id] = true
		b.ID = id
		bc := &stepCtx{o: bo, key: key, label: fmt.Sprintf("%s parallel branch %s", c.label, cmpOr(id, key))}
		var bs Step
		execs := d.execKeys(bc, &bs, false)
		b.Run = bs.Run
		if len(execs) == 0 {
			d.errAt(bo.n, key, "%s requires run, command, or pipeline", bc.label)
		} else if len(execs) > 1 {
			d.fail(bc, execs[1], "can only define one of run, command, or pipeline")
		}
		if v, ok := bo.get("env"); ok {
			b.Env = stringMap(v)
		}
		if v, ok := bo.get("cwd"); ok {
			b.Cwd, _ = str(v)
		}
		if v, ok := bo.get("stdin"); ok {
			d.remember(bo, "stdin", key+".stdin")
			b.Stdin = d.value(v)
		}
		p.Branches = append(p.Branches, b)
	}
	return p
}

func (d *decoder) forEach(c *stepCtx, s *Step, execs []string) {
	o := c.o
	v, _ := o.get("for_each")
	expr, ok := str(v)
	if !ok {
		d.fail(c, "for_each", "for_each must be a string (step reference expression)")
	}
	fe := &ForEach{Expr: expr, ItemVar: "item", IndexVar: "index", BatchSize: 1}
	s.ForEach = fe
	if len(execs) > 0 {
		d.fail(c, execs[0], "for_each cannot also define run, command, pipeline, workflow, or parallel")
	}
	if _, ok := o.get("approval"); ok {
		d.fail(c, "approval", "for_each steps cannot define approval (use a separate step after the loop)")
	}
	if _, ok := o.get("input"); ok {
		d.fail(c, "input", "for_each steps cannot define input (use a separate step after the loop)")
	}
	if _, ok := o.get("stdin"); ok {
		d.fail(c, "stdin", "for_each steps cannot define stdin (loop input comes from the for_each expression)")
	}
	for _, k := range []string{"item_var", "index_var"} {
		if v, ok := o.get(k); ok {
			name, isStr := str(v)
			if !isStr {
				d.fail(c, k, "%s must be a string", k)
				continue
			}
			if k == "item_var" {
				fe.ItemVar = name
			} else {
				fe.IndexVar = name
			}
		}
	}
	if fe.ItemVar == fe.IndexVar {
		d.fail(c, "index_var", "item_var and index_var cannot be the same")
	}
	if v, ok := o.get("batch_size"); ok {
		if b, ok := positiveInt(v, 1<<53); ok {
			fe.BatchSize = b
		} else {
			d.fail(c, "batch_size", "batch_size must be a positive integer")
		}
	}
	if v, ok := o.get("pause_ms"); ok {
		if p, ok := nonNegative(v); ok {
			fe.PauseMs = p
		} else {
			d.fail(c, "pause_ms", "pause_ms must be a finite non-negative number")
		}
	}
	sv, _ := o.get("steps")
	seq := deref(sv)
	if seq == nil || seq.Kind != yaml.SequenceNode || len(seq.Content) == 0 {
		d.fail(c, "steps", "for_each requires a non-empty steps array")
		return
	}
	seen := map[string]bool{}
	for i, n := range seq.Content {
		fe.Steps = append(fe.Steps, d.subStep(c, fe, n, fmt.Sprintf("%s.steps[%d]", c.key, i), seen))
	}
}

func (d *decoder) subStep(parent *stepCtx, fe *ForEach, n *yaml.Node, key string, seen map[string]bool) Step {
	o, ok := asObject(n)
	if !ok {
		d.errAt(deref(n), key, "%s for_each sub-step must be an object", parent.label)
		return Step{}
	}
	s := Step{Line: o.n.Line, Column: o.n.Column}
	id, ok := str(o.values["id"])
	switch {
	case !ok || id == "":
		d.errAt(o.at("id"), key+".id", "%s for_each sub-step requires an id", parent.label)
	case id == fe.ItemVar || id == fe.IndexVar:
		d.errAt(o.at("id"), key+".id", "%s for_each sub-step id '%s' conflicts with loop variable", parent.label, id)
	case seen[id]:
		d.errAt(o.at("id"), key+".id", "%s duplicate for_each sub-step id: %s", parent.label, id)
	}
	seen[id] = true
	s.ID = id
	c := &stepCtx{o: o, key: key, label: fmt.Sprintf("%s for_each sub-step %s", parent.label, cmpOr(id, key))}
	d.common(c, &s)
	for _, k := range []string{"approval", "input"} {
		if _, ok := o.get(k); ok {
			d.errAt(o.at(k), key+"."+k, "%s for_each sub-steps cannot contain approval or input steps", parent.label)
		}
	}
	for _, k := range []string{"workflow", "parallel", "for_each"} {
		if _, ok := o.get(k); ok {
			d.fail(c, k, "cannot define workflow, parallel, or for_each")
		}
	}
	execs := d.execKeys(c, &s, false)
	if len(execs) == 0 {
		d.errAt(o.n, key, "%s requires run, command, or pipeline", c.label)
	} else if len(execs) > 1 {
		d.fail(c, execs[1], "can only define one of run, command, or pipeline")
	}
	return s
}

func (d *decoder) approval(c *stepCtx, n *yaml.Node) *Approval {
	if b, ok := boolean(n); ok {
		if !b {
			return nil
		}
		return &Approval{}
	}
	if s, ok := str(n); ok {
		switch s {
		case "":
			return nil
		case "required":
			return &Approval{}
		}
		return &Approval{Prompt: s}
	}
	o, ok := asObject(n)
	if !ok {
		return nil
	}
	ac := &stepCtx{o: o, key: c.k("approval"), label: c.label}
	a := &Approval{}
	if v, ok := o.get("prompt"); ok {
		a.Prompt, _ = str(v)
	}
	if v, ok := o.values["items"]; ok {
		a.Items, a.HasItems = d.value(v), true
	}
	if v, ok := o.get("preview"); ok {
		if p, ok := str(v); ok {
			a.Preview, a.HasPreview = p, true
		}
	}
	for _, pair := range [][2]string{{"initiated_by", "initiatedBy"}, {"required_approver", "requiredApprover"}} {
		for _, k := range pair {
			v, ok := o.get(k)
			if !ok {
				continue
			}
			s, isStr := str(v)
			if !isStr {
				d.fail(ac, k, "approval.%s must be a string", k)
				continue
			}
			if pair[0] == "initiated_by" && a.InitiatedBy == "" {
				a.InitiatedBy = s
			} else if pair[0] == "required_approver" && a.RequiredApprover == "" {
				a.RequiredApprover = s
			}
		}
	}
	for _, k := range []string{"require_different_approver", "requireDifferentApprover"} {
		if v, ok := o.get(k); ok {
			b, isBool := boolean(v)
			if !isBool {
				d.fail(ac, k, "approval.%s must be a boolean", k)
			} else if a.RequireDifferentApprover == nil {
				a.RequireDifferentApprover = &b
			}
		}
	}
	return a
}

func (d *decoder) input(c *stepCtx, n *yaml.Node) *Input {
	o, ok := asObject(n)
	if !ok {
		d.fail(c, "input", "input must be an object")
		return nil
	}
	ic := &stepCtx{o: o, key: c.k("input"), label: c.label}
	in := &Input{}
	p, ok := str(o.values["prompt"])
	if !ok {
		d.fail(ic, "prompt", "input.prompt must be a string")
	}
	in.Prompt = p
	schema, ok := d.value(o.values["responseSchema"]).(map[string]any)
	if !ok {
		d.fail(ic, "responseSchema", "input.responseSchema must be an object")
	} else if err := CheckSchema(schema); err != nil {
		d.fail(ic, "responseSchema", "input.responseSchema is invalid: %v", err)
	}
	in.ResponseSchema = schema
	if v, ok := o.get("defaults"); ok {
		in.Defaults = d.value(v)
	}
	return in
}
