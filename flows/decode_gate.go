package flows

import (
	"gopkg.in/yaml.v3"
)

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
	schema, ok := d.plainValue(o.values["responseSchema"]).(map[string]any)
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
