package flows

import (
	"errors"
	"regexp"
	"sort"
	"strings"
)

// ParseArgsJSON decodes an --args-json value; it must be a JSON object.
// Numbers decode as float64, and objects inside it as *Object, keeping
// their keys' order as Lobster's JSON.parse keeps it.
func ParseArgsJSON(s string) (map[string]any, error) {
	v, err := DecodeJSON([]byte(s))
	if err != nil {
		return nil, errors.New("args JSON must be valid JSON")
	}
	o, ok := v.(*Object)
	if !ok {
		return nil, errors.New("args JSON must be a JSON object")
	}
	return o.fields(), nil
}

// ResolveArgs returns the run's args: every declared arg's default, then
// each provided key (declared or not) overriding or adding. Args without a
// default that were not provided are absent. provided may be nil; the
// result is a new map.
func ResolveArgs(wf *Workflow, provided map[string]any) map[string]any {
	args := map[string]any{}
	for _, a := range wf.Args {
		if a.HasDefault {
			args[a.Name] = a.Default
		}
	}
	for k, v := range provided {
		args[k] = v
	}
	return args
}

var nonAlnumRE = regexp.MustCompile(`[^A-Z0-9]+`)

// ArgEnvName is the environment variable an arg is exported as:
// LOBSTER_ARG_ plus the name trimmed, upper-cased, with every run of
// characters other than A-Z and 0-9 turned into "_" and leading and
// trailing "_" removed ("user-id" → LOBSTER_ARG_USER_ID). It returns ""
// when nothing is left, and such an arg is not exported.
func ArgEnvName(name string) string {
	n := nonAlnumRE.ReplaceAllString(strings.ToUpper(strings.TrimSpace(name)), "_")
	n = strings.Trim(n, "_")
	if n == "" {
		return ""
	}
	return "LOBSTER_ARG_" + n
}

// ArgsEnv returns the variables every step gets for args
// (lobster-format §4): LOBSTER_ARGS_JSON, the args as compact JSON (keys
// sorted), and one LOBSTER_ARG_<NAME> per arg holding JavaScript
// String(value) (arrays join with ",", objects are "[object Object]").
// When two names normalise alike, the later name in sorted order wins.
func ArgsEnv(args map[string]any) map[string]string {
	if args == nil {
		args = map[string]any{}
	}
	env := map[string]string{"LOBSTER_ARGS_JSON": renderJSON(args)}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if n := ArgEnvName(k); n != "" {
			env[n] = jsString(args[k])
		}
	}
	return env
}

// StepEnv returns the variables a step adds to the process environment:
// ArgsEnv(args), then each layer in order (workflow env, step env, and
// for branches and loop sub-steps their own env), later layers overriding
// earlier ones, every value resolved with ResolveTemplate.
func StepEnv(args map[string]any, results map[string]StepResult, layers ...map[string]string) map[string]string {
	env := ArgsEnv(args)
	for _, layer := range layers {
		for k, v := range layer {
			env[k] = ResolveTemplate(v, args, results)
		}
	}
	return env
}

// EnvList renders env as sorted "KEY=value" entries for exec.Cmd.Env.
func EnvList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// StepCwd returns the working directory for a step: the last non-empty of
// cwds (pass workflow, step, and branch or sub-step cwd in that order),
// with ${arg} templates resolved; "" means the executor's own directory.
func StepCwd(args map[string]any, cwds ...string) string {
	cwd := ""
	for _, c := range cwds {
		if c != "" {
			cwd = c
		}
	}
	return ResolveArgsTemplate(cwd, args)
}

// ResolveWorkflowArgs resolves a workflow step's workflow_args: string
// values are templates, other values pass through as they are.
func ResolveWorkflowArgs(s *Step, args map[string]any, results map[string]StepResult) map[string]any {
	out := make(map[string]any, len(s.WorkflowArgs))
	for k, v := range s.WorkflowArgs {
		if str, ok := v.(string); ok {
			v = ResolveTemplate(str, args, results)
		}
		out[k] = v
	}
	return out
}
