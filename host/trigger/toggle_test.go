package trigger_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/trigger"
)

// A trigger keeps who last enabled or disabled it; one stored before it
// did (the record below, as that code wrote it) loads with none, lists,
// and records the next change.
func TestTriggerKeepsWhoToggledIt(t *testing.T) {
	r := newRig(t)
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ts := trigger.New(r.eng, func() time.Time { return at })
	require.NoError(t, r.eng.UpdateRecords(engine.TriggerRecords, func(tx engine.RecordTx) error {
		return tx.Put("trigger/def/legacy", []byte(`{"name":"legacy","enabled":true,"target":"controller","controller":"ctl",`+
			`"args_from":"body","token_env":"T","max_body":1048576,"rate":10,"burst":20,`+
			`"created_at":"2026-05-01T00:00:00Z","updated_at":"2026-05-01T00:00:00Z"}`))
	}))
	old, err := ts.Get("legacy")
	require.NoError(t, err)
	require.True(t, old.Enabled)
	require.Nil(t, old.LastToggle)
	list, err := ts.List()
	require.NoError(t, err)
	require.Len(t, list, 1)

	off, err := ts.SetEnabled("legacy", false, "alice")
	require.NoError(t, err)
	require.Equal(t, &trigger.Toggle{Enabled: false, By: "alice", At: at}, off.LastToggle)
	at = at.Add(time.Hour)
	same, err := ts.SetEnabled("legacy", false, "bob")
	require.NoError(t, err)
	require.Equal(t, off, same, "disabling a disabled trigger changes nothing, not even who disabled it")
	on, err := ts.SetEnabled("legacy", true, "bob")
	require.NoError(t, err)
	require.Equal(t, &trigger.Toggle{Enabled: true, By: "bob", At: at}, on.LastToggle)
	got, err := ts.Get("legacy")
	require.NoError(t, err)
	require.Equal(t, on, got)
}
