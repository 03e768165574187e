package flows

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

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
		b.Run, b.Pipeline = bs.Run, bs.Pipeline
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
	fe := &ForEach{Expr: expr, ItemVar: "item", IndexVar: "index"}
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
