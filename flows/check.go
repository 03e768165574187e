package flows

import (
	"fmt"
	"strings"
)

// checkIDs reports ids repeated across steps and parallel branches.
// Repeats inside one parallel block are reported by the block itself.
func (d *decoder) checkIDs(wf *Workflow) {
	stepIDs := map[string]bool{}
	owner := map[string]int{} // id -> index of the step declaring it
	for i, s := range wf.Steps {
		if s.ID != "" {
			key := fmt.Sprintf("steps[%d].id", i)
			if stepIDs[s.ID] {
				d.errAtKey(key, s.Line, s.Column, "Duplicate workflow step id: %s", s.ID)
			} else if _, ok := owner[s.ID]; ok {
				d.errAtKey(key, s.Line, s.Column, "Duplicate workflow id across steps/parallel branches: %s", s.ID)
			}
			stepIDs[s.ID] = true
			if _, ok := owner[s.ID]; !ok {
				owner[s.ID] = i
			}
		}
		if s.Parallel == nil {
			continue
		}
		for j, b := range s.Parallel.Branches {
			if b.ID == "" || b.ID == s.ID {
				continue
			}
			if o, ok := owner[b.ID]; ok && o != i || stepIDs[b.ID] {
				d.errAtKey(fmt.Sprintf("steps[%d].parallel.branches[%d].id", i, j), b.Line, b.Column,
					"Duplicate workflow id across steps/parallel branches: %s", b.ID)
			}
			if _, ok := owner[b.ID]; !ok {
				owner[b.ID] = i
			}
		}
	}
}

// errAtKey reports at the recorded position of key, falling back to line
// and col.
func (d *decoder) errAtKey(key string, line, col int, format string, args ...any) {
	if n, ok := d.pos[key]; ok {
		line, col = n.Line, n.Column
	}
	d.errs.add(d.file, line, col, key, format, args...)
}

// checkRefs reports strict refs (conditions, stdin that is one ref,
// for_each expressions) to ids that will have no result when the step
// runs: ids never declared, and ids of steps that run later.
func (d *decoder) checkRefs(wf *Workflow) {
	declared := map[string]bool{}
	for _, s := range wf.Steps {
		declared[s.ID] = true
		if s.Parallel != nil {
			for _, b := range s.Parallel.Branches {
				declared[b.ID] = true
			}
		}
	}
	known := map[string]bool{}
	for i, s := range wf.Steps {
		key := fmt.Sprintf("steps[%d]", i)
		d.checkStepRefs(s, key, known, declared)
		if s.Parallel != nil {
			for j, b := range s.Parallel.Branches {
				d.checkStdinRef(b.Stdin, b.Line, b.Column, fmt.Sprintf("%s.parallel.branches[%d].stdin", key, j), known, declared)
			}
		}
		if s.ForEach != nil {
			if IsStepRef(s.ForEach.Expr) {
				d.checkRef(s.ForEach.Expr, s.Line, s.Column, key+".for_each", known, declared)
			}
			scope := copySet(known)
			scope[s.ForEach.ItemVar], scope[s.ForEach.IndexVar] = true, true
			for j, sub := range s.ForEach.Steps {
				d.checkStepRefs(sub, fmt.Sprintf("%s.steps[%d]", key, j), scope, declared)
				scope[sub.ID] = true
			}
		}
		known[s.ID] = true
		if s.Parallel != nil {
			for _, b := range s.Parallel.Branches {
				known[b.ID] = true
			}
		}
	}
}

func copySet(m map[string]bool) map[string]bool {
	c := make(map[string]bool, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (d *decoder) checkStepRefs(s Step, key string, known, declared map[string]bool) {
	if e, ok := s.When.(string); ok {
		if c, err := parseCondition(e); err == nil {
			whenKey := key + ".when"
			if _, ok := d.pos[whenKey]; !ok {
				whenKey = key + ".condition"
			}
			c.walk(func(n *cond) {
				if n.op == opRef {
					d.checkRef("$"+n.id+"."+n.path, s.Line, s.Column, whenKey, known, declared)
				}
			})
		}
	}
	d.checkStdinRef(s.Stdin, s.Line, s.Column, key+".stdin", known, declared)
}

func (d *decoder) checkStdinRef(stdin any, line, col int, key string, known, declared map[string]bool) {
	if s, ok := stdin.(string); ok && IsStepRef(s) {
		d.checkRef(s, line, col, key, known, declared)
	}
}

func (d *decoder) checkRef(ref string, line, col int, key string, known, declared map[string]bool) {
	m := strictRefRE.FindStringSubmatch(strings.TrimSpace(ref))
	if m == nil || known[m[1]] {
		return
	}
	msg := "Unknown step reference: " + m[1] + "." + m[2]
	if declared[m[1]] {
		msg += " (step " + m[1] + " has not run yet at this point)"
	}
	d.errAtKey(key, line, col, "%s", msg)
}
