package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/trigger"
)

// The trigger commands work on the home's store with no gateway running:
// add stores the workflow's absolute path and the variables' names, list,
// show and runs answer in JSON, disable and enable flip it, remove
// deletes it; bad input is a usage error (exit 2) that names the fix.
func TestTriggersRoundTrip(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	wf := writeWorkflow(t)

	code, out, errOut := run(t, home, "triggers", "add", "build", "--pipeline", wf, "--secret-env", "GH_SECRET", "--rate", "2", "--json")
	require.Equal(t, 0, code, errOut)
	var tr trigger.Trigger
	require.NoError(t, json.Unmarshal([]byte(out), &tr), out)
	require.Equal(t, trigger.TargetPipeline, tr.Target)
	require.Equal(t, wf, tr.Pipeline)
	require.Equal(t, "GH_SECRET", tr.SecretEnv)
	require.Equal(t, 2.0, tr.Rate)
	require.Equal(t, int64(trigger.DefaultMaxBody), tr.MaxBody)

	code, out, errOut = run(t, home, "triggers", "list", "--json")
	require.Equal(t, 0, code, errOut)
	var l struct {
		Count    int
		Triggers []trigger.Trigger
	}
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Equal(t, 1, l.Count)

	code, out, errOut = run(t, home, "triggers", "show", "build")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "POST /hooks/build")
	require.Contains(t, out, "hmac $GH_SECRET")

	code, out, _ = run(t, home, "triggers", "disable", "build", "--json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &tr))
	require.False(t, tr.Enabled)
	code, _, _ = run(t, home, "triggers", "enable", "build")
	require.Equal(t, 0, code)

	code, out, errOut = run(t, home, "triggers", "runs", "build", "--json")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"count":0,"runs":[]}`, out)

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"triggers", "add", "open", "--controller", "ctl"}, "--secret-env VAR"},
		{[]string{"triggers", "add", "both", "--controller", "ctl", "--pipeline", wf, "--token-env", "T"}, "not both"},
		{[]string{"triggers", "add", "build", "--controller", "ctl", "--token-env", "T"}, "exists"},
		{[]string{"triggers", "add", "x", "--controller", "ctl", "--token-env", "T", "--args-from", "form"}, "--args-from"},
		{[]string{"triggers", "add", "x", "--pipeline", "/no/such.lobster", "--token-env", "T"}, "--pipeline"},
	} {
		code, _, errOut := run(t, home, bad.args...)
		require.Equal(t, 2, code, "%v: %s", bad.args, errOut)
		require.Contains(t, errOut, bad.want, bad.args)
	}
	code, _, errOut = run(t, home, "triggers", "show", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "triggers list")

	code, _, errOut = run(t, home, "triggers", "remove", "build")
	require.Equal(t, 0, code, errOut)
	code, out, _ = run(t, home, "triggers", "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Triggers: 0")
}
