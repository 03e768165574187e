package flows

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Splice is a reference to data from outside the workflow file (an arg,
// a step's output, a gate's response) pasted into a shell command or a
// typed pipeline. The shell then runs whatever the value holds: a value
// with `;` or `$(...)` in it runs as code. In a pipeline the value stays
// in the one word it was written in (ResolveStages), but an exec --shell
// line is shell code all the same. A command that names Var instead gets
// the same value in its environment (RefsEnv), and can quote it ("$Var")
// safely.
type Splice struct {
	// Step is the id of the step (or parallel branch) whose run: or
	// pipeline: holds the splice; Line and Column locate the step.
	Step         string
	Line, Column int
	// Key is the field, e.g. "steps[2].run" or "steps[2].pipeline".
	Key string
	// InPipeline says the field is a pipeline:, not a run:.
	InPipeline bool
	// Ref is the reference as written: "${name}" or "$id.path".
	Ref string
	// Var is the environment variable that holds the same value.
	Var string
}

// refFields are the fields of a step result a ref can start with
// (StepResult.Field), in the order RefsEnv tries them.
var refFields = []string{"stdout", "json", "approved", "approvedBy", "initiatedBy", "subject", "response", "skipped", "error", "errorMessage", "id"}

// stepVarRE matches a step variable named in a command.
var stepVarRE = regexp.MustCompile(`LOBSTER_STEP_[A-Z0-9_]+`)

// envPart is s upper-cased with every run of characters other than A-Z
// and 0-9 turned into "_", and leading and trailing "_" removed.
func envPart(s string) string {
	return strings.Trim(nonAlnumRE.ReplaceAllString(strings.ToUpper(s), "_"), "_")
}

// RefEnvName is the environment variable that holds the value of the
// step ref $id.path: LOBSTER_STEP_ plus id and path, upper-cased, with
// every run of characters other than A-Z and 0-9 turned into "_"
// ($fetch.json.user-id → LOBSTER_STEP_FETCH_JSON_USER_ID).
func RefEnvName(id, path string) string {
	return "LOBSTER_STEP_" + envPart(id) + "_" + envPart(path)
}

// RefsEnv returns the step variables command names: for each
// LOBSTER_STEP_<ID>_<PATH> in it whose step has a result and whose path
// leads to a value, that value as a ref would render it (strings as they
// are, other values as compact JSON). Naming the variable is what asks
// for it, so a step's environment holds only the outputs it uses. A name
// that matches nothing is left unset.
func RefsEnv(command string, results map[string]StepResult) map[string]string {
	env := map[string]string{}
	names := stepVarRE.FindAllString(command, -1)
	if len(names) == 0 {
		return env
	}
	ids := slices.Sorted(maps.Keys(results))
	for _, name := range names {
		for _, id := range ids {
			rest, ok := strings.CutPrefix(name, "LOBSTER_STEP_"+envPart(id)+"_")
			if !ok {
				continue
			}
			if v, ok := resultByName(results[id], rest); ok {
				env[name] = renderValue(v)
				break
			}
		}
	}
	return env
}

// resultByName finds the value of r whose path, as envPart renders it, is
// name: a field, then keys and indexes down its value.
func resultByName(r StepResult, name string) (any, bool) {
	for _, f := range refFields {
		v, ok := r.Field(f)
		if !ok {
			continue
		}
		if rest, ok := strings.CutPrefix(name, envPart(f)); ok {
			if v, ok := valueByName(v, rest); ok {
				return v, true
			}
		}
	}
	return nil, false
}

// valueByName walks v down the path name spells ("" is v itself,
// "_USER_ID" is v["user-id"] or v["user"]["id"], ...).
func valueByName(v any, name string) (any, bool) {
	if name == "" {
		return v, true
	}
	name, ok := strings.CutPrefix(name, "_")
	if !ok {
		return nil, false
	}
	step := func(key string, child any) (any, bool) {
		if rest, ok := strings.CutPrefix(name, envPart(key)); ok && envPart(key) != "" {
			return valueByName(child, rest)
		}
		return nil, false
	}
	switch c := v.(type) {
	case *Object:
		for i, k := range c.Keys() {
			if got, ok := step(k, c.vals[i]); ok {
				return got, true
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(c)) {
			if got, ok := step(k, c[k]); ok {
				return got, true
			}
		}
	case []any:
		for i, child := range c {
			if got, ok := step(strconv.Itoa(i), child); ok {
				return got, true
			}
		}
	}
	return nil, false
}

// Splices lists every declared arg and step ref pasted into a shell
// command or a pipeline of wf: the run: and the pipeline: of each step,
// parallel branch and for_each sub-step. A ${name} that is not a
// declared arg and a $id.path whose id is no step's are left to the
// shell, so they are not listed. pipeline validate warns about each;
// strict_refs refuses them.
func Splices(wf *Workflow) []Splice {
	args := map[string]bool{}
	for _, a := range wf.Args {
		args[a.Name] = true
	}
	cmds := commands(wf)
	ids := map[string]bool{}
	for _, c := range cmds {
		ids[c.id] = true
	}
	for _, s := range wf.Steps {
		if s.ForEach != nil { // the loop variables are step ids too
			ids[s.ForEach.ItemVar], ids[s.ForEach.IndexVar] = true, true
		}
	}
	var out []Splice
	for _, c := range cmds {
		at := Splice{Step: c.id, Line: c.line, Column: c.col, Key: c.key, InPipeline: c.pipeline}
		for _, m := range argRE.FindAllStringSubmatch(c.run, -1) {
			if v := ArgEnvName(m[1]); v != "" && args[m[1]] {
				at.Ref, at.Var = m[0], v
				out = append(out, at)
			}
		}
		for _, m := range refRE.FindAllStringSubmatch(c.run, -1) {
			if ids[m[1]] {
				at.Ref, at.Var = m[0], RefEnvName(m[1], m[2])
				out = append(out, at)
			}
		}
	}
	return out
}

// command is the run: or the pipeline: of one step, parallel branch or
// for_each sub-step of a workflow (run empty for a gate or a nested
// block).
type command struct {
	id, key   string
	line, col int
	run       string
	pipeline  bool
}

// commands lists the steps, branches and sub-steps of wf in file order,
// each with its run: (every one) and its pipeline: (when it has one).
func commands(wf *Workflow) []command {
	var out []command
	add := func(id, key string, line, col int, run, pipeline string) {
		out = append(out, command{id, key + ".run", line, col, run, false})
		if pipeline != "" {
			out = append(out, command{id, key + ".pipeline", line, col, pipeline, true})
		}
	}
	for i, s := range wf.Steps {
		add(s.ID, fmt.Sprintf("steps[%d]", i), s.Line, s.Column, s.Run, s.Pipeline)
		if s.Parallel != nil {
			for j, b := range s.Parallel.Branches {
				add(b.ID, fmt.Sprintf("steps[%d].parallel.branches[%d]", i, j), b.Line, b.Column, b.Run, b.Pipeline)
			}
		}
		if s.ForEach != nil {
			for j, sub := range s.ForEach.Steps {
				add(sub.ID, fmt.Sprintf("steps[%d].for_each.steps[%d]", i, j), sub.Line, sub.Column, sub.Run, sub.Pipeline)
			}
		}
	}
	return out
}

// Advice says what to write instead of sp, for a warning or an error.
func (sp Splice) Advice() string {
	if sp.InPipeline {
		return fmt.Sprintf("step %s pastes %s into its pipeline, where an exec --shell stage runs a value holding shell syntax as code; "+
			"read \"$%s\" (quoted) in an exec --shell stage instead, or pass the value as the step's stdin",
			sp.Step, sp.Ref, sp.Var)
	}
	return fmt.Sprintf("step %s pastes %s into its shell command, so a value holding shell syntax runs as code; write \"$%s\" (quoted) instead",
		sp.Step, sp.Ref, sp.Var)
}

// checkStrictRefs refuses every splice in wf (strict_refs: true).
func (d *decoder) checkStrictRefs(wf *Workflow) {
	for _, sp := range Splices(wf) {
		d.errAtKey(sp.Key, sp.Line, sp.Column, "%s (strict_refs is on)", sp.Advice())
	}
}
