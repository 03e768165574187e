package flows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

func TestRefEnvName(t *testing.T) {
	t.Parallel()
	require.Equal(t, "LOBSTER_STEP_FETCH_JSON_USER_ID", flows.RefEnvName("fetch", "json.user-id"))
	require.Equal(t, "LOBSTER_STEP_MY_GATE_RESPONSE", flows.RefEnvName("my-gate", "response"))
}

func TestRefsEnvResolvesTheVariablesACommandNames(t *testing.T) {
	t.Parallel()
	out := "a; rm -rf ~"
	yes := true
	results := map[string]flows.StepResult{
		"fetch":   {ID: "fetch", Stdout: &out, HasJSON: true, JSON: map[string]any{"user-id": "u1", "list": []any{map[string]any{"n": "v"}}, "obj": map[string]any{"k": 1.0}}},
		"fetch_2": {ID: "fetch_2", Stdout: &out},
		"gate":    {ID: "gate", Approved: &yes, HasResponse: true, Response: map[string]any{"text": "$(id)"}},
	}
	cmd := `echo "$LOBSTER_STEP_FETCH_STDOUT" "$LOBSTER_STEP_FETCH_JSON_USER_ID" "$LOBSTER_STEP_FETCH_JSON_LIST_0_N" ` +
		`"$LOBSTER_STEP_FETCH_JSON_OBJ" "$LOBSTER_STEP_FETCH_2_STDOUT" "$LOBSTER_STEP_GATE_APPROVED" "$LOBSTER_STEP_GATE_RESPONSE_TEXT" ` +
		`"$LOBSTER_STEP_GATE_RESPONSE" "$LOBSTER_STEP_NOPE_STDOUT" "$LOBSTER_STEP_FETCH_JSON_MISSING"`
	require.Equal(t, map[string]string{
		"LOBSTER_STEP_FETCH_STDOUT":        out,
		"LOBSTER_STEP_FETCH_JSON_USER_ID":  "u1",
		"LOBSTER_STEP_FETCH_JSON_LIST_0_N": "v",
		"LOBSTER_STEP_FETCH_JSON_OBJ":      `{"k":1}`,
		"LOBSTER_STEP_FETCH_2_STDOUT":      out,
		"LOBSTER_STEP_GATE_APPROVED":       "true",
		"LOBSTER_STEP_GATE_RESPONSE_TEXT":  "$(id)",
		"LOBSTER_STEP_GATE_RESPONSE":       `{"text":"$(id)"}`,
	}, flows.RefsEnv(cmd, results))
	require.Empty(t, flows.RefsEnv("echo $fetch.stdout", results), "only named variables are exported")
}

const splicing = `
args:
  who: {default: x}
steps:
  - id: a
    run: echo ${who} ${HOME} $HOME.bak
  - id: gate
    input:
      prompt: say
      responseSchema: {type: object}
  - id: b
    run: echo "$LOBSTER_ARG_WHO" $a.stdout $gate.response.text
`

func TestSplicesListsOutsideDataPastedIntoCommands(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("w.lobster", []byte(splicing))
	require.NoError(t, err, "splicing is allowed by default, as in Lobster")
	var got []string
	for _, sp := range flows.Splices(wf) {
		got = append(got, sp.Step+" "+sp.Ref+" "+sp.Var)
	}
	require.Equal(t, []string{
		"a ${who} LOBSTER_ARG_WHO",
		"b $a.stdout LOBSTER_STEP_A_STDOUT",
		"b $gate.response.text LOBSTER_STEP_GATE_RESPONSE_TEXT",
	}, got, "shell variables (${HOME}, $HOME.bak) are not splices")
}

func TestStrictRefsRefusesSplicesAtLoad(t *testing.T) {
	t.Parallel()
	_, err := flows.Parse("w.lobster", []byte("strict_refs: true\n"+splicing))
	require.Error(t, err)
	require.Contains(t, err.Error(), `w.lobster:6:5: steps[0].run: step a pastes ${who} into its shell command`)
	require.Contains(t, err.Error(), `write "$LOBSTER_STEP_A_STDOUT" (quoted) instead (strict_refs is on)`)

	safe := "strict_refs: true\nsteps:\n  - id: a\n    run: echo hi\n  - id: b\n    run: echo \"$LOBSTER_STEP_A_STDOUT\" ${HOME}\n"
	wf, err := flows.Parse("w.lobster", []byte(safe))
	require.NoError(t, err)
	require.True(t, wf.StrictRefs)

	_, err = flows.Parse("w.lobster", []byte("strict_refs: maybe\n"+safe[len("strict_refs: true\n"):]))
	require.ErrorContains(t, err, "strict_refs must be true or false")
}
