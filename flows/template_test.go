package flows_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

func TestResolveTemplate(t *testing.T) {
	t.Parallel()
	args := map[string]any{"name": "ann", "n": 2.0, "list": []any{"a", nil, 1.0}, "obj": map[string]any{"k": 1.0}, "dash-ed": "d", "nul": nil}
	yes := true
	gate := flows.StepResult{ID: "gate", Approved: &yes}
	results := map[string]flows.StepResult{
		"s":     flows.ShellResult("s", `{"items":[{"name":"x"}],"n":1.5,"b":false,"o":{"z":"<&>","a":[1]},"nil":null}`+"\n"),
		"plain": flows.ShellResult("plain", "hi\n"),
		"gate":  gate,
		"skip":  flows.SkippedResult("skip"),
		"a-b":   flows.ShellResult("a-b", "dash"),
	}
	for in, want := range map[string]string{
		"echo ${name} ${n}":       "echo ann 2",
		"${list}|${obj}|${nul}":   "a,,1|[object Object]|null",
		"${dash-ed}":              "d",
		"${HOME} ${missing}":      "${HOME} ${missing}",
		"${s.json}":               "${s.json}",
		"$s.json.items.0.name":    "x",
		"$s.json.items.1.name":    "",
		"$s.json.items.01.name":   "",
		"$s.json.n $s.json.b":     "1.5 false",
		"$s.json.o":               `{"z":"<&>","a":[1]}`, // keys in source order
		"$s.json.nil.":            ".",
		"$plain.stdout":           "hi\n",
		"$plain.json":             "",
		"$gate.approved":          "true",
		"$skip.approved":          "false",
		"$skip.skipped":           "true",
		"$plain.skipped":          "false",
		"$HOME.json $unknown.out": "$HOME.json $unknown.out",
		"$a-b.stdout!":            "dash!",
		"$$plain.stdout":          "$hi\n",
		"pre-$plain.stdout.x-y":   "pre--y",
	} {
		require.Equal(t, want, flows.ResolveTemplate(in, args, results), in)
	}
	require.Equal(t, "/w/ann/$plain.stdout", flows.ResolveArgsTemplate("/w/${name}/$plain.stdout", args))
}

func TestResolveStdin(t *testing.T) {
	t.Parallel()
	results := map[string]flows.StepResult{
		"s":    flows.ShellResult("s", `[1,2]`),
		"skip": flows.SkippedResult("skip"),
	}
	args := map[string]any{"who": "bo"}
	tests := []struct {
		in     any
		want   any
		ok     bool
		errMsg string
	}{
		{nil, nil, false, ""},
		{" $s.json ", []any{1.0, 2.0}, true, ""},
		{"$s.stdout", "[1,2]", true, ""},
		{"$skip.json", nil, false, ""},
		{"$nope.json", nil, false, "Unknown step reference: nope.json"},
		{"hello ${who} $s.json", "hello bo [1,2]", true, ""},
		{"hello $nope.json", "hello $nope.json", true, ""},
		{map[string]any{"a": "$s.json"}, map[string]any{"a": "$s.json"}, true, ""},
		{3.0, 3.0, true, ""},
	}
	for _, tt := range tests {
		v, ok, err := flows.ResolveStdin(tt.in, args, results)
		if tt.errMsg != "" {
			require.EqualError(t, err, tt.errMsg)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tt.ok, ok, "%v", tt.in)
		require.Equal(t, tt.want, v, "%v", tt.in)
	}
	require.Equal(t, "text", flows.StdinText("text"))
	require.Equal(t, `{"a":[1,"<"]}`, flows.StdinText(map[string]any{"a": []any{1.0, "<"}}))
}

func TestStepResults(t *testing.T) {
	t.Parallel()
	r := flows.ShellResult("s", "hi\n")
	require.False(t, r.HasJSON, "stdout that is not JSON has no json")
	r = flows.ShellResult("s", " null ")
	require.True(t, r.HasJSON)
	require.Nil(t, r.JSON)

	syn := flows.SyntheticResult("g", map[string]any{"a": 1.0})
	require.Equal(t, `{"a":1}`, *syn.Stdout)
	require.Equal(t, flows.StepResult{ID: "g"}, flows.SyntheticResult("g", nil))
	require.Equal(t, flows.ShellResult("g", "[1]"), flows.SyntheticResult("g", "[1]"))

	yes := true
	subject, err := flows.DecodeJSON([]byte(`{"t":"s"}`))
	require.NoError(t, err)
	full := flows.StepResult{ID: "x", Stdout: ptr("o"), JSON: nil, HasJSON: true, Approved: &yes, ApprovedBy: "al",
		InitiatedBy: "ag", Subject: subject, HasSubject: true, Response: "r", HasResponse: true}
	b, err := json.Marshal(full)
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"x","stdout":"o","json":null,"approved":true,"approvedBy":"al","initiatedBy":"ag","subject":{"t":"s"},"response":"r"}`, string(b))
	var back flows.StepResult
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, full, back)

	b, err = json.Marshal(flows.FailedResult("f", errString("bad")))
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"f","error":true,"errorMessage":"bad"}`, string(b))
	b, err = json.Marshal(flows.SkippedResult("k"))
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"k","skipped":true}`, string(b))
}

func ptr(s string) *string { return &s }

func TestOutputRule(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("o.yaml", []byte("steps:\n  - {id: a, run: x}\n  - {id: b, run: x}\n  - {id: c, run: x}\n"))
	require.NoError(t, err)
	tests := []struct {
		name    string
		results map[string]flows.StepResult
		want    []any
	}{
		{"nothing ran", map[string]flows.StepResult{}, []any{}},
		{"all skipped", map[string]flows.StepResult{"a": flows.SkippedResult("a"), "b": flows.SkippedResult("b")}, []any{}},
		{"json array spreads", map[string]flows.StepResult{"a": flows.ShellResult("a", "[1,2]")}, []any{1.0, 2.0}},
		{"json value wraps", map[string]flows.StepResult{"a": flows.ShellResult("a", `{"k":1}`)}, []any{map[string]any{"k": 1.0}}},
		{"json null", map[string]flows.StepResult{"a": flows.ShellResult("a", "null")}, []any{nil}},
		{"stdout", map[string]flows.StepResult{"a": flows.ShellResult("a", "hi\n")}, []any{"hi\n"}},
		{"empty stdout", map[string]flows.StepResult{"a": flows.ShellResult("a", "")}, []any{}},
		{"response", map[string]flows.StepResult{"a": flows.InputResult("a", "subj", map[string]any{"d": "y"})}, []any{map[string]any{"d": "y"}}},
		{"later skipped ignored", map[string]flows.StepResult{"a": flows.ShellResult("a", "1"), "b": flows.SkippedResult("b")}, []any{1.0}},
		{"later failure ignored", map[string]flows.StepResult{"a": flows.ShellResult("a", "1"), "b": flows.ShellResult("b", "2"), "c": flows.FailedResult("c", errString("x"))}, []any{2.0}},
		{"no fields", map[string]flows.StepResult{"c": {ID: "c"}}, []any{}},
	}
	for _, tt := range tests {
		require.Equal(t, flows.Stringify(tt.want), flows.Stringify(flows.Output(wf, tt.results)), tt.name)
		require.NotNil(t, flows.Output(wf, tt.results), tt.name)
	}
}

func TestValidateResponse(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type":     "object",
		"required": []any{"decision"},
		"properties": map[string]any{
			"decision": map[string]any{"type": "string", "enum": []any{"approve", "reject"}},
			"score":    map[string]any{"type": "integer", "minimum": 1.0, "maximum": 5.0},
			"tags":     map[string]any{"type": "array", "items": map[string]any{"type": "string", "minLength": 2.0}, "maxItems": 2.0},
			"maybe":    map[string]any{"type": []any{"string", "null"}},
		},
		"additionalProperties": false,
	}
	require.NoError(t, flows.CheckSchema(schema))
	ok := map[string]any{"decision": "approve", "score": 3.0, "tags": []any{"ab"}, "maybe": nil}
	require.NoError(t, flows.ValidateResponse("s", schema, ok))
	for _, tt := range []struct {
		resp any
		want string
	}{
		{"text", "at /: must be object"},
		{map[string]any{}, "at /: must have required property 'decision'"},
		{map[string]any{"decision": "x"}, "at /decision: must be equal to one of the allowed values"},
		{map[string]any{"decision": "approve", "score": 1.5}, "at /score: must be integer"},
		{map[string]any{"decision": "approve", "score": 9.0}, "at /score: must be <= 5"},
		{map[string]any{"decision": "approve", "score": 0.0}, "at /score: must be >= 1"},
		{map[string]any{"decision": "approve", "tags": []any{"a"}}, "at /tags/0: must NOT have fewer than 2 characters"},
		{map[string]any{"decision": "approve", "tags": []any{"ab", "cd", "ef"}}, "at /tags: must NOT have more than 2 items"},
		{map[string]any{"decision": "approve", "maybe": 1.0}, "at /maybe: must be string,null"},
		{map[string]any{"decision": "approve", "other": 1.0}, "at /: must NOT have additional properties"},
	} {
		require.EqualError(t, flows.ValidateResponse("s", schema, tt.resp), "Workflow input step s response failed schema validation "+tt.want)
	}
	for _, bad := range []map[string]any{
		{"type": "strnig"},
		{"type": 3.0},
		{"properties": []any{}},
		{"required": "a"},
		{"enum": "a"},
		{"items": "a"},
		{"minimum": "1"},
		{"maxLength": -1.0},
		{"properties": map[string]any{"a": map[string]any{"type": "nope"}}},
	} {
		require.Error(t, flows.CheckSchema(bad), "%v", bad)
	}
}
