package flows_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/flowgate/flowgate/flows"
)

// FuzzLoad feeds arbitrary bytes to the YAML and JSON parsers and
// validator: they must never panic, and a failure must be *Error values.
func FuzzLoad(f *testing.F) {
	for _, dir := range []string{"compat", "malformed", "sub"} {
		paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
		for _, p := range paths {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data, filepath.Ext(p) == ".json")
			}
		}
	}
	f.Add([]byte("a: &a [*a]"), false)
	f.Add([]byte("steps:\n  - &s {id: a, run: x}\n  - *s\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		name := "fuzz.yaml"
		if asJSON {
			name = "fuzz.json"
		}
		wf, err := flows.Parse(name, data)
		if err == nil {
			if wf == nil || len(wf.Steps) == 0 {
				t.Fatal("valid workflow without steps")
			}
			for i := range wf.Steps {
				_ = wf.Steps[i].Kind()
			}
			return
		}
		for _, e := range unwrapAll(err) {
			var fe *flows.Error
			if !errors.As(e, &fe) {
				t.Fatalf("error %v is not a *flows.Error", e)
			}
		}
	})
}

func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// FuzzCondition evaluates arbitrary expressions: never a panic, and an
// expression that parses evaluates without a syntax error.
func FuzzCondition(f *testing.F) {
	for _, s := range []string{
		"true", "$a.json.x == 1 && !($b.approved || $c.stdout != 'x')",
		"$a.json.n >= -1.5", "$r.response.decision == approve", "((((", "'\\'", "\"a\\\"b\"",
		"$a.json == $a.json", "!!!!$a.skipped", "1 < '2'", "$a-b.json.0.k", "null == null",
	} {
		f.Add(s)
	}
	results := map[string]flows.StepResult{
		"a":   flows.ShellResult("a", `{"x":1,"n":[1,{"k":null}],"s":"2"}`),
		"b":   flows.SkippedResult("b"),
		"c":   flows.ShellResult("c", "x"),
		"r":   flows.InputResult("r", nil, map[string]any{"decision": "approve"}),
		"a-b": flows.ShellResult("a-b", `[{"k":true}]`),
	}
	f.Fuzz(func(t *testing.T, expr string) {
		_, _ = flows.EvalCondition(expr, results)
		_ = flows.ConditionRefs(expr)
		_ = flows.ResolveTemplate(expr, map[string]any{"a": "x"}, results)
	})
}

// FuzzPipeline checks that the pipeline parser never panics, that every
// stage it returns re-parses from its own raw text to the same stage, that
// resolving refs to values full of pipeline syntax keeps every stage and
// every word, and that stages survive the JSON form resume state keeps.
func FuzzPipeline(f *testing.F) {
	for _, s := range []string{
		"exec --json --shell 'echo [1]' | where a.b>=2 | head --n=3 |",
		`exec "a | b" | map --wrap v k="{{v | upper}}"`, `x 'it\'s' "q\"\\\$\` + "`" + `"`,
		"| a", "a || b", "'", `"\`, "a\tb\r\nc", "--k v --k=w --z", "",
		`exec --shell "echo ${a}" | ${b} $s.stdout --${b}=$s.json.k`,
	} {
		f.Add(s)
	}
	closer := `x" | exec --shell "touch p`
	args := map[string]any{"a": closer, "b": "--shell 'a b'"}
	results := map[string]flows.StepResult{"s": flows.ShellResult("s", `{"k":"' | y"}`)}
	f.Fuzz(func(t *testing.T, text string) {
		stages, err := flows.ParsePipeline(text)
		if err != nil {
			return
		}
		if len(stages) == 0 {
			t.Fatal("no error and no stages")
		}
		got, err := flows.ResolveStages(stages, args, results)
		if err != nil && !errors.Is(err, flows.ErrPositionalFlag) {
			t.Fatalf("resolve %q: %v", text, err)
		}
		if err == nil {
			for i, st := range stages {
				if got[i].Raw != st.Raw || len(got[i].Args.Positional) != len(st.Args.Positional) {
					t.Fatalf("resolving %q changed stage %d: %+v to %+v", text, i, st, got[i])
				}
			}
			if len(got) != len(stages) {
				t.Fatalf("resolving %q made %d stages of %d", text, len(got), len(stages))
			}
		}
		for _, st := range stages {
			again, err := flows.ParsePipeline(st.Raw)
			if err != nil || len(again) != 1 || !reflect.DeepEqual(again[0], st) {
				t.Fatalf("stage %q re-parses to %+v, %v; want %+v", st.Raw, again, err, st)
			}
		}
		if !utf8.ValidString(text) {
			return // JSON replaces invalid UTF-8, as JSON.stringify would
		}
		b, err := json.Marshal(stages)
		if err != nil {
			t.Fatal(err)
		}
		var back []flows.Stage
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, stages) {
			t.Fatalf("JSON round trip: %s -> %+v, %v", b, back, err)
		}
	})
}
