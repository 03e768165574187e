package dest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/notify/dest"
)

// TestCheck: a spec given on the command line is refused, with a message
// naming what is wrong, when it is malformed or holds a literal secret;
// refs and names pass.
func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec string
		kind dest.Kind
		err  string
	}{
		{spec: "ops", kind: dest.KindName},
		{spec: "cmd:/usr/local/bin/page-me --loud", kind: dest.KindCommand},
		{spec: "https://hooks.example.com/x?token=${HOOK_TOKEN}", kind: dest.KindWebhook},
		{spec: "slack://hook:${SLACK_TOKEN}@webhook", kind: dest.KindService},
		{spec: "generic+https://example.com/hook", kind: dest.KindService},
		{spec: "smtp://bot:${SMTP_PASSWORD}@mail.example.com:587/?from=a@example.com&to=b@example.com", kind: dest.KindService},
		{spec: "ntfy://ntfy.example.com/builds", kind: dest.KindService},
		{spec: "", err: "empty"},
		{spec: "cmd:  ", err: "no command"},
		{spec: "bad name!", err: "neither a URL"},
		{spec: "fax://0123", err: `scheme "fax" is unknown; use http, https, cmd: or one of bark, discord`},
		{spec: "https://user:hunter2@example.com/x", err: "literal password; write it as ${VAR}"},
		{spec: "smtp://bot:hunter2@mail.example.com/?to=b@example.com", err: "literal password"},
		{spec: "https://example.com/x?token=abc", err: "literal token= value"},
		{spec: "ntfy://ntfy.example.com/t?password=abc", err: "literal password= value"},
		{spec: "https://example.com/x?token=${1BAD}", err: `"${1BAD}" is not a reference`},
		{spec: "https://example.com/x?token=${OPEN", err: "not closed"},
		{spec: "https:///nohost", err: "has no host"},
		{spec: "discord://hunter2@12345", err: "discord://***@12345 holds a literal token where *** is shown"},
		{spec: "slack://hook:hunter2@webhook", err: "slack://hook:***@webhook holds a literal token"},
		{spec: "gotify://gotify.example.com/hunter2", err: "holds a literal token"},
		{spec: "discord://${DISCORD_TOKEN}@12345", kind: dest.KindService},
	} {
		kind, kerr := dest.KindOf(tc.spec)
		err := dest.Check(tc.spec)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.spec)
			require.NotContains(t, err.Error(), "hunter2", "a refused secret is not repeated")
			continue
		}
		require.NoError(t, err, tc.spec)
		require.NoError(t, kerr, tc.spec)
		require.Equal(t, tc.kind, kind, tc.spec)
	}
}

// TestRedact: refs are shown as written, literal credentials as ***.
func TestRedact(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]string{
		"ops":         "ops",
		"cmd:page-me": "cmd:page-me",
		"https://u:pw@example.com/x?token=t1&a=b":      "https://u:***@example.com/x?a=b&token=***",
		"https://example.com/x?token=${T}":             "https://example.com/x?token=${T}",
		"slack://hook:T00-B00-XYZ@webhook":             "slack://hook:***@webhook",
		"telegram://123456:ABCDEF@telegram?chats=@ops": "telegram://123456:***@telegram?chats=@ops",
		"gotify://gotify.example.com/AbCdEf":           "gotify://gotify.example.com/***",
		"gotify://gotify.example.com/${GOTIFY_TOKEN}":  "gotify://gotify.example.com/${GOTIFY_TOKEN}",
		"ntfy://ntfy.example.com/builds":               "ntfy://ntfy.example.com/builds",
		"ntfy://me:pw@ntfy.example.com/builds":         "ntfy://me:***@ntfy.example.com/builds",
	} {
		require.Equal(t, want, dest.Redact(spec), spec)
	}
}
