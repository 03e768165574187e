package pipeline

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// execSpec is what an exec stage runs (lobster-format §14.3): --shell
// LINE, or a single argument holding whitespace, through the shell; else
// the arguments as argv, with no shell. --stdin raw|json|jsonl feeds the
// stage's items to the process; without it the items are dropped.
// written are the stage's arguments before their refs were resolved:
// whether the one argument holds whitespace is asked of what the file
// wrote, so a value with spaces in "exec ${cmd}" stays one argv word and
// never becomes a shell line.
func execSpec(call *flows.Call, written flows.StageArgs) (sdk.TaskSpec, error) {
	var spec sdk.TaskSpec
	pos := call.Args.Positional
	switch line, ok := call.Args.String("shell"); {
	case ok:
		spec.Shell = line
	case call.Args.Has("shell") || (len(written.Positional) == 1 && strings.ContainsAny(written.Positional[0], " \t\r\n")):
		spec.Shell = strings.Join(pos, " ")
	case len(pos) > 0:
		spec.Argv = pos
	}
	if spec.Shell == "" && len(spec.Argv) == 0 {
		return spec, errors.New("exec requires a command")
	}
	mode, ok := call.Args.Named["stdin"]
	if !ok {
		return spec, nil
	}
	var b strings.Builder
	switch mode {
	case "raw":
		for i, it := range call.Items {
			if i > 0 {
				b.WriteByte('\n')
			}
			if s, ok := it.(string); ok {
				b.WriteString(s)
			} else {
				b.WriteString(jsonText(it))
			}
		}
	case "json":
		items := call.Items
		if items == nil {
			items = []any{}
		}
		b.WriteString(flows.Stringify(items))
	case "jsonl":
		for _, it := range call.Items {
			b.WriteString(flows.Stringify(it))
			b.WriteByte('\n')
		}
	default:
		return spec, fmt.Errorf("exec --stdin must be raw, json, or jsonl (got %v)", mode)
	}
	spec.Input = b.String()
	return spec, nil
}

// execOutput is the stdout of an exec stage's finished task, or the
// stage's failure in Lobster's words.
func execOutput(name string, timeoutMs int, t *sdk.Task, spec sdk.TaskSpec) (string, error) {
	var res sdk.Result
	if t.Result != nil {
		res = *t.Result
	}
	if t.Status != sdk.TaskSucceeded {
		if t.Status != sdk.TaskFailed {
			_, err := taskResult(name, timeoutMs, t)
			return "", err
		}
		prog := "sh"
		if len(spec.Argv) > 0 {
			prog = spec.Argv[0]
		}
		code := "null"
		if t.ExitCode != nil {
			code = fmt.Sprint(*t.ExitCode)
			if *t.ExitCode == 127 {
				return "", errors.New("exec command not found: " + firstNonEmpty(strings.Join(spec.Argv, " "), spec.Shell))
			}
		}
		if t.ExitCode == nil && strings.Contains(lastError(t), "not found") {
			return "", errors.New("exec command not found: " + prog)
		}
		// A program that ran and exited has only the runner's account of
		// its exit ("attempt 1: exit code 1") as an error, which Lobster
		// would not show: its message names the program instead.
		why := lastError(t)
		if t.ExitCode != nil {
			why = ""
		}
		return "", fmt.Errorf("exec failed (%s): %s", code, firstNonEmpty(strings.TrimSpace(res.Stdout), why, prog))
	}
	r, err := shellResult(name, res)
	if err != nil {
		return "", err
	}
	return *r.Stdout, nil
}

// execItems turns an exec stage's stdout into items: with --json the
// whole output as one JSON value (empty is null; an array is spread),
// else one string per non-empty line, a trailing CR removed.
func execItems(stdout string, asJSON bool) ([]any, error) {
	if asJSON {
		text := strings.TrimSpace(stdout)
		if text == "" {
			return []any{nil}, nil
		}
		v, err := flows.DecodeJSON([]byte(text))
		if err != nil {
			return nil, fmt.Errorf("exec --json could not parse stdout as JSON: %v", err)
		}
		if a, ok := v.([]any); ok {
			return a, nil
		}
		return []any{v}, nil
	}
	var items []any
	for line := range strings.SplitSeq(stdout, "\n") {
		if line = strings.TrimSuffix(line, "\r"); line != "" {
			items = append(items, line)
		}
	}
	return items, nil
}

// pauseFirst makes spec sleep pauseMs before it runs: a for_each batch
// pause (lobster-format §7.4) before an item's first task. An argv spec
// becomes the same argv run by the shell after the sleep.
func pauseFirst(spec *sdk.TaskSpec, pauseMs float64) {
	line := spec.Shell
	if len(spec.Argv) > 0 {
		quoted := make([]string, len(spec.Argv))
		for i, a := range spec.Argv {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		line, spec.Argv = "exec "+strings.Join(quoted, " "), nil
	}
	spec.Shell = "sleep " + strconv.FormatFloat(pauseMs/1000, 'f', -1, 64) + "; " + line
}
