package flows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

func condResults() map[string]flows.StepResult {
	yes, no := true, false
	gate := flows.ShellResult("gate", "")
	gate.Approved = &yes
	denied := flows.StepResult{ID: "denied", Approved: &no}
	return map[string]flows.StepResult{
		"n":       flows.ShellResult("n", `{"count": 3, "zero": 0, "str": "5", "blank": " ", "word": "abc", "nul": null, "list": [1, 2], "obj": {"a": 1, "b": [true]}, "empty": "", "f": 1.5, "t": true}`),
		"gate":    gate,
		"denied":  denied,
		"skip":    flows.SkippedResult("skip"),
		"ask":     flows.InputResult("ask", nil, map[string]any{"decision": "approve"}),
		"failed":  flows.FailedResult("failed", errString("boom")),
		"my-step": flows.ShellResult("my-step", "hi\n"),
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestEvalCondition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr any
		want bool
	}{
		{nil, true},
		{true, true},
		{false, false},
		{" true ", true},
		{"false", false},
		// truthiness
		{"$gate.approved", true},
		{"$denied.approved", false},
		{"$skip.approved", false},
		{"$skip.skipped", true},
		{"$n.json.zero", false},
		{"$n.json.nul", false},
		{"$n.json.empty", false},
		{"$n.json.list", true},
		{"$n.json.missing", false},
		{"'0'", true},
		{"0", false},
		{"''", false},
		{"null", false},
		{"$failed.error", true},
		{"$failed.errorMessage == 'boom'", true},
		{"$my-step.stdout == 'hi\\n'", false},
		{"$my-step.stdout == \"hi\n\"", true},
		// == and != are strict
		{"$n.json.count == 3", true},
		{"$n.json.count == '3'", false},
		{"$n.json.str == 5", false},
		{"$n.json.str == '5'", true},
		{"$n.json.t == true", true},
		{"$n.json.t == 'true'", false},
		{"$n.json.nul == null", true},
		{"$n.json.missing == null", false},
		{"$n.json.count != 3", false},
		{"$n.json.count != '3'", true},
		{"$ask.response.decision == approve", true},
		{"$ask.response.decision != reject", true},
		{"$n.json.obj == $n.json.obj", true},
		{"$n.json.list == $n.json.list", true},
		{"$n.json.list == $n.json.obj", false},
		// ordering only between numbers or numeric strings
		{"$n.json.count > 2", true},
		{"$n.json.count >= 3", true},
		{"$n.json.count < 3", false},
		{"$n.json.count <= 3", true},
		{"$n.json.str > 4", true},
		{"$n.json.str < '10'", true},
		{"$n.json.f > 1", true},
		{"$n.json.word > 1", false},
		{"$n.json.word < 1", false},
		{"$n.json.blank < 1", false},
		{"$n.json.t > 0", false},
		{"$n.json.nul < 1", false},
		{"-1 < 0", true},
		// logic, negation, grouping
		{"!$denied.approved", true},
		{"!!$gate.approved", true},
		{"$gate.approved && $denied.approved", false},
		{"$gate.approved || $denied.approved", true},
		{"$denied.approved || $n.json.count == 3 && $gate.approved", true},
		{"($denied.approved || $gate.approved) && !$skip.approved", true},
		{"!($n.json.count > 2)", false},
	}
	results := condResults()
	for _, tt := range tests {
		got, err := flows.EvalCondition(tt.expr, results)
		require.NoError(t, err, "%v", tt.expr)
		require.Equal(t, tt.want, got, "%v", tt.expr)
	}
}

func TestEvalConditionErrors(t *testing.T) {
	t.Parallel()
	results := condResults()
	for expr, want := range map[any]string{
		"yes":                       "Unsupported condition: yes",
		"approve == $ask.response":  "Unsupported condition: approve == $ask.response",
		"$n.json.count == 1 == 1":   "Unsupported condition: $n.json.count == 1 == 1",
		"$n.json.count ==":          "Unsupported condition: $n.json.count ==",
		"($gate.approved":           "Unsupported condition: ($gate.approved",
		"$gate":                     "Unsupported condition: $gate",
		"'open":                     "Unsupported condition: 'open",
		"$gate.approved & true":     "Unsupported condition: $gate.approved & true",
		"${flag}":                   "Unsupported condition: ${flag}",
		"$nope.approved":            "Unknown step reference: nope.approved",
		"!$nope.approved":           "Unknown step reference: nope.approved",
		"$gate.approved || $x.json": "",
		5.0:                         "Unsupported condition type",
	} {
		_, err := flows.EvalCondition(expr, results)
		if want == "" {
			require.NoError(t, err, "%v short-circuits before the unknown ref", expr)
			continue
		}
		require.EqualError(t, err, want, "%v", expr)
	}
	_, err := flows.EvalCondition("$nope.approved", results)
	var ref *flows.UnknownRefError
	require.ErrorAs(t, err, &ref)
	require.Equal(t, "nope.approved", ref.Ref)
	require.Equal(t, []string{"a", "b-c"}, flows.ConditionRefs("$a.x == 1 || !$b-c.y.z"))
}
