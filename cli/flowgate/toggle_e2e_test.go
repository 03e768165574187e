package main_test

import (
	"encoding/json"
	"testing"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/stretchr/testify/require"
)

// TestEnableDisableByOverTheGateway runs the real binary against a real
// gateway: cron disable and triggers disable with --by record that name,
// across the socket, and cron show and triggers show print it in text
// and JSON.
func TestEnableDisableByOverTheGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, _, logf := e2eDirs(t)
	g := startGateway(t, bin, home, logf)
	defer g.reap()
	fg := func(args ...string) string { return flowgate(t, bin, append([]string{"--home", home}, args...)...) }

	fg("cron", "add", "--name", "yearly", "--cron", "0 3 1 1 *", "--command", "true")
	require.Contains(t, fg("cron", "disable", "yearly", "--by", "ann"), "Disabled cron job")
	var j apitype.CronJob
	require.NoError(t, json.Unmarshal([]byte(fg("cron", "show", "yearly", "--json")), &j))
	require.False(t, j.Enabled)
	require.NotNil(t, j.LastToggle)
	require.Equal(t, "ann", j.LastToggle.By)
	require.Regexp(t, `lastToggle:\s+disabled by ann at `, fg("cron", "show", "yearly"))

	fg("triggers", "add", "inbox", "--controller", "ctl", "--token-env", "HOOK_TOKEN")
	require.Contains(t, fg("triggers", "disable", "inbox", "--by", "ann"), "Disabled trigger inbox.")
	var tr apitype.Trigger
	require.NoError(t, json.Unmarshal([]byte(fg("triggers", "show", "inbox", "--json")), &tr))
	require.False(t, tr.Enabled)
	require.NotNil(t, tr.LastToggle)
	require.Equal(t, "ann", tr.LastToggle.By)
	require.Regexp(t, `lastToggle:\s+disabled by ann at `, fg("triggers", "show", "inbox"))
}
