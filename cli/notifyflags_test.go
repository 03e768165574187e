package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// TestNotifyFlagsAreStoredAndShown: tasks flow create takes --notify,
// --notify-to (repeatable) and --notify-template (a file, stored as its
// text); tasks flow show prints them in text and JSON, with a literal
// credential a record holds (written through the API, not the CLI)
// masked in both, and in tasks flow list --json.
func TestNotifyFlagsAreStoredAndShown(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	tpl := filepath.Join(dir, "msg.tmpl")
	require.NoError(t, os.WriteFile(tpl, []byte("{{.Title}} ({{.Event}})\n"), 0o600))
	hook := "https://hooks.example/x?token=${HOOK_TOKEN}"
	code, out, errOut := run(t, home, "tasks", "flow", "create", "--controller", "c", "--goal", "g", "--owner", "o", "--json",
		"--notify", "state_changes", "--notify-to", "ops", "--notify-to", hook, "--notify-template", tpl)
	require.Equal(t, 0, code, errOut)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(out), &f), out)
	require.Equal(t, sdk.NotifyStateChanges, f.NotifyPolicy)
	require.Equal(t, []string{"ops", hook}, f.NotifyTo, "a ${VAR} ref is stored as written")
	require.Equal(t, "{{.Title}} ({{.Event}})\n", f.NotifyTemplate)

	code, out, errOut = run(t, home, "tasks", "flow", "show", f.ID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "notify:")
	require.Contains(t, out, "state_changes")
	require.Contains(t, out, "ops "+hook)
	require.Contains(t, out, "custom, 24 bytes")

	var leaky string
	seed(t, home, func(eng *engine.Engine) {
		lf, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g",
			NotifyTo: []string{"https://hooks.example/x?token=s3cr3t-literal", "slack://xoxb-s3cr3t@chan"}})
		require.NoError(t, err)
		leaky = lf.ID
	})
	for _, args := range [][]string{{"tasks", "flow", "show", leaky}, {"tasks", "flow", "show", leaky, "--json"}, {"tasks", "flow", "list", "--json"}} {
		code, out, errOut = run(t, home, args...)
		require.Equal(t, 0, code, errOut)
		require.NotContains(t, out, "s3cr3t", args)
		require.Contains(t, out, "hooks.example", args)
	}
}

// TestNotifyFlagsRefuseBadInput: a bad policy, a destination that does
// not parse or holds a literal credential, a template that does not
// parse or is missing, milestones with nowhere to go, and notify flags
// on a pipeline rerun (which is told about as its source) are refused
// with exit 2, naming the flag, and nothing is created.
func TestNotifyFlagsRefuseBadInput(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	bad := filepath.Join(dir, "bad.tmpl")
	require.NoError(t, os.WriteFile(bad, []byte("{{.Title"), 0o600))
	create := []string{"tasks", "flow", "create", "--controller", "c", "--goal", "g", "--owner", "o"}
	runTask := []string{"tasks", "run", "--detach"}
	for _, c := range []struct {
		args []string
		says string
	}{
		{append(create, "--notify", "loud"), `--notify "loud" is not a notify policy`},
		{append(create, "--notify-to", "https://h.example/x?token=literal"), "--notify-to: the destination https://h.example/x?token=*** has a literal token= value"},
		{append(create, "--notify-to", "nope://x"), `--notify-to: the destination scheme "nope" is unknown`},
		{append(create, "--notify-to", "ops", "--notify-template", bad), "--notify-template " + bad + ": the notify template does not parse"},
		{append(create, "--notify-template", filepath.Join(dir, "missing.tmpl")), "--notify-template: open"},
		{append(runTask, "--notify-on-milestone", "built", "--", "true"), "--notify-on-milestone needs somewhere to send: add --notify-to DEST"},
		{append(runTask, "--notify", "never", "--", "true"), `--notify "never" is not a notify policy`},
		{append(runTask, "--notify-to", "${OOPS", "--", "true"), "--notify-to:"},
		{[]string{"pipeline", "run", bad, "--notify", "bogus"}, `--notify "bogus" is not a notify policy`},
		{[]string{"pipeline", "run", bad, "--from-step", "a", "--id", "f1", "--notify-to", "ops"}, "a --from-step rerun is told about as the flow it reruns"},
	} {
		code, out, errOut := run(t, home, c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, errOut)
		require.Contains(t, errOut, c.says, c.args)
		require.NotContains(t, errOut, "literal\"", "the refusal does not echo the secret")
		require.Empty(t, out, c.args)
	}
	require.Equal(t, 0, flowCount(t, home), "nothing was created")
}

// TestRunNotifyOnMilestoneFlag: tasks run takes --notify-on-milestone as
// repeated flags and comma lists, dropping repeats, and passes its notify
// settings to the run's mirrored flow.
func TestRunNotifyOnMilestoneFlag(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, out, errOut := run(t, home, "tasks", "run", "--detach", "--json", "--notify", "silent", "--notify-to", "ops",
		"--notify-on-milestone", "built,tested", "--notify-on-milestone", "built", "--notify-on-milestone", " deployed ", "--", "true")
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(out), &task), out)
	require.Equal(t, []string{"built", "tested", "deployed"}, task.Spec.NotifyOnMilestone)
	code, out, errOut = run(t, home, "tasks", "flow", "show", task.FlowID, "--json")
	require.Equal(t, 0, code, errOut)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(out), &f), out)
	require.Equal(t, sdk.NotifySilent, f.NotifyPolicy)
	require.Equal(t, []string{"ops"}, f.NotifyTo)
	code, out, errOut = run(t, home, "tasks", "show", task.ID)
	require.Equal(t, 0, code, errOut)
	require.True(t, strings.Contains(out, "notifyOnMilestone:") && strings.Contains(out, "built, tested, deployed"), out)
}
