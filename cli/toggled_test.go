package cli_test

import (
	"encoding/json"
	"os/user"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/trigger"
)

// With no gateway running, cron and triggers enable and disable record
// who did it: --by when given, else the OS user; show prints it, and a
// job or trigger already so keeps who made it so.
func TestEnableDisableRecordWho(t *testing.T) {
	t.Parallel()
	me, err := user.Current()
	require.NoError(t, err)
	home := t.TempDir()

	code, _, errOut := run(t, home, "cron", "add", "--name", "nightly", "--cron", "0 3 * * *", "--command", "true")
	require.Equal(t, 0, code, errOut)
	code, out, errOut := run(t, home, "cron", "show", "nightly")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `lastToggle:\s+none since it was added`, out)
	code, out, errOut = run(t, home, "cron", "disable", "nightly", "--by", "ann", "--json")
	require.Equal(t, 0, code, errOut)
	j := cronJob(t, out)
	require.NotNil(t, j.LastToggle)
	require.Equal(t, "ann", j.LastToggle.By)
	require.False(t, j.LastToggle.Enabled)
	code, out, errOut = run(t, home, "cron", "disable", "nightly", "--by", "bob", "--json")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "ann", cronJob(t, out).LastToggle.By, "disabling a disabled job keeps who disabled it")
	code, out, errOut = run(t, home, "cron", "show", "nightly")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `lastToggle:\s+disabled by ann at `+j.LastToggle.At.UTC().Format(time.RFC3339), out)
	code, out, errOut = run(t, home, "cron", "enable", "nightly", "--json")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, me.Username, cronJob(t, out).LastToggle.By, "with no --by, the OS user")

	code, _, errOut = run(t, home, "triggers", "add", "inbox", "--controller", "ctl", "--token-env", "HOOK_TOKEN")
	require.Equal(t, 0, code, errOut)
	code, out, errOut = run(t, home, "triggers", "disable", "inbox", "--by", "ann", "--json")
	require.Equal(t, 0, code, errOut)
	var tr trigger.Trigger
	require.NoError(t, json.Unmarshal([]byte(out), &tr), out)
	require.Equal(t, &trigger.Toggle{Enabled: false, By: "ann", At: tr.UpdatedAt}, tr.LastToggle)
	code, out, errOut = run(t, home, "triggers", "show", "inbox")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "disabled by ann at ")
	code, out, errOut = run(t, home, "triggers", "enable", "inbox", "--json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &tr), out)
	require.Equal(t, me.Username, tr.LastToggle.By)
}
