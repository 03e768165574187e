package flows

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

const maxTimeoutMs = 2147483647

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
	if v, ok := o.get("strict_refs"); ok {
		b := deref(v)
		if b.Kind != yaml.ScalarNode || (b.Value != "true" && b.Value != "false") {
			d.errAt(o.at("strict_refs"), "strict_refs", "strict_refs must be true or false")
		}
		wf.StrictRefs = b.Value == "true"
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
	d.checkRunSizes(wf)
	if wf.StrictRefs {
		d.checkStrictRefs(wf)
	}
	wf.pipelineErrs = d.pipelineErrs
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
	d.session(c, &s)
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
			d.pipeline(c, s, p)
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
		if o, isObj := d.value(v).(*Object); isObj {
			s.WorkflowArgs = o.fields()
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

// pipeline decodes a pipeline: key. The pipeline is parsed now, refs and
// all (its refs are resolved in the parsed words, ResolveStages, so no
// value can change how it parses), but a syntax error does not fail the
// load: as in Lobster it fails the step when the step runs, so the
// step's on_error applies. It is kept for Workflow.PipelineErrors, which
// validate reports.
func (d *decoder) pipeline(c *stepCtx, s *Step, p string) {
	s.Pipeline = p
	if _, err := ParsePipeline(p); err != nil {
		n := c.o.at("pipeline")
		line, col := 0, 0
		if n != nil {
			line, col = n.Line, n.Column
		}
		d.pipelineErrs.add(d.file, line, col, c.k("pipeline"), "%s pipeline parse failed: %v", c.label, err)
	}
}
