package flows_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

func TestParsePipelineErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       error
	}{
		{"empty", "", flows.ErrEmptyPipeline},
		{"blank", " \t\n", flows.ErrEmptyPipeline},
		{"leading pipe", "| head", flows.ErrEmptyStage},
		{"empty middle", "head || head", flows.ErrEmptyStage},
		{"blank middle", "head |  | head", flows.ErrEmptyStage},
		{"lone pipe", "|", flows.ErrEmptyStage},
		{"unclosed single", "where 'a=1", flows.ErrUnclosedQuote},
		{"unclosed double", `exec "echo | head`, flows.ErrUnclosedQuote},
		{"escaped close quote", `exec "a\"`, flows.ErrUnclosedQuote},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := flows.ParsePipeline(tc.text)
			require.ErrorIs(t, err, tc.want)
			require.EqualError(t, err, tc.want.Error())
		})
	}
}

// A flag named "_" would overwrite the positional arguments in the args
// object a stage gets (FuzzPipeline found "0 --_" losing them in a JSON
// round trip): it is refused, naming the stage, bare or with a value.
func TestParsePipelineRefusesAPositionalFlag(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"0 --_", "head | pick a --_=b", "sort --_ x"} {
		_, err := flows.ParsePipeline(text)
		require.ErrorIs(t, err, flows.ErrPositionalFlag, text)
		require.ErrorContains(t, err, `stage "`)
	}
}

func TestParsePipelineStages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       string // JSON of the stages
	}{
		{"one stage", "head", `[{"name":"head","args":{"_":[]},"raw":"head"}]`},
		{"trailing pipe is ignored", "head --n 2 |", `[{"name":"head","args":{"_":[],"n":"2"},"raw":"head --n 2"}]`},
		{"pipes split, raw trimmed", " exec echo a |where x=1 ",
			`[{"name":"exec","args":{"_":["echo","a"]},"raw":"exec echo a"},{"name":"where","args":{"_":["x=1"]},"raw":"where x=1"}]`},
		{"pipe inside quotes", `exec --shell "echo a | tr a b"`,
			`[{"name":"exec","args":{"_":[],"shell":"echo a | tr a b"},"raw":"exec --shell \"echo a | tr a b\""}]`},
		{"flag forms", "sort --key=a.b --desc --n 3 x",
			`[{"name":"sort","args":{"_":["x"],"desc":true,"key":"a.b","n":"3"},"raw":"sort --key=a.b --desc --n 3 x"}]`},
		// Lobster's greedy rule: a flag takes the next token as its value...
		{"greedy flag value", `exec --shell echo hi there`,
			`[{"name":"exec","args":{"_":["hi","there"],"shell":"echo"},"raw":"exec --shell echo hi there"}]`},
		// ...except exec's --json, which never takes one (Lobster 2026.9.13).
		{"exec --json is boolean", `exec --json "echo [1]"`,
			`[{"name":"exec","args":{"_":["echo [1]"],"json":true},"raw":"exec --json \"echo [1]\""}]`},
		{"--json of other commands is greedy", `x --json y`,
			`[{"name":"x","args":{"_":[],"json":"y"},"raw":"x --json y"}]`},
		{"bare flag before flag", "exec --json --shell 'echo [1]'",
			`[{"name":"exec","args":{"_":[],"json":true,"shell":"echo [1]"},"raw":"exec --json --shell 'echo [1]'"}]`},
		{"values stay strings", "head --n=5", `[{"name":"head","args":{"_":[],"n":"5"},"raw":"head --n=5"}]`},
		{"empty value", "x --k=", `[{"name":"x","args":{"_":[],"k":""},"raw":"x --k="}]`},
		{"whitespace kinds", "x\ta\r\nb", `[{"name":"x","args":{"_":["a","b"]},"raw":"x\ta\r\nb"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stages, err := flows.ParsePipeline(tc.text)
			require.NoError(t, err)
			got, err := json.Marshal(stages)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(got))
		})
	}
}

func TestParsePipelineQuoting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"single quotes are literal", `x 'a\nb $c'`, []string{`a\nb $c`}},
		{"single quote escape", `x 'it\'s'`, []string{"it's"}},
		{"double quote escapes", "x \"q\\\" b\\\\ d\\$ t\\`\"", []string{"q\" b\\ d$ t`"}},
		{"other escapes kept verbatim", `x "a\nb"`, []string{`a\nb`}},
		{"backslash-newline removed", "x \"a\\\nb\"", []string{"ab"}},
		{"quotes join a token", `x a"b c"d`, []string{"ab cd"}},
		{"empty quoted token", `x "" ''`, []string{"", ""}},
		{"backslash outside quotes is literal", `x a\b`, []string{`a\b`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stages, err := flows.ParsePipeline(tc.text)
			require.NoError(t, err)
			require.Len(t, stages, 1)
			require.Equal(t, tc.want, stages[0].Args.Positional)
		})
	}
}

func TestStageArgsJSONRoundTrip(t *testing.T) {
	t.Parallel()
	stages, err := flows.ParsePipeline("map --wrap v a=1 | head --n 2 --x")
	require.NoError(t, err)
	b, err := json.Marshal(stages)
	require.NoError(t, err)
	var back []flows.Stage
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, stages, back)
}
