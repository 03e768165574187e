package gateway_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
)

// TestNotifyConfig: the config's notify: map, notify_retry and
// http.public_url are checked with the rest of the config, each refusal
// naming its key; a ref to a variable the gateway's environment lacks
// stops the gateway's start, naming the key and never a secret.
func TestNotifyConfig(t *testing.T) {
	for body, want := range map[string]string{
		"notify: {ops: 'fax://x'}":                       `notify.ops: the destination scheme "fax" is unknown`,
		"notify: {ops: other}":                           `notify.ops: "other" names another destination`,
		"notify: {'a b': 'https://example.com'}":         `notify.a b: "a b" is not a destination name`,
		"notify_retry: {attempts: -1}":                   "notify_retry.attempts must be at least 1",
		"notify_retry: {max_backoff: 1ms}":               "notify_retry.max_backoff must be at least 1s",
		"http: {public_url: 'ftp://x'}":                  "http.public_url \"ftp://x\" is not an http or https address",
		"http: {public_url: 'https://u:pw@example.com'}": "is not an http or https address without credentials",
	} {
		_, err := gateway.LoadConfig(writeConfig(t, body))
		require.ErrorContains(t, err, want, body)
	}

	fc, err := gateway.LoadConfig(writeConfig(t, `notify:
  ops: "https://hooks.example.com/T0/literal-s3cret?token=${FG_TEST_UNSET_TOKEN}"
  mail: "smtp://bot:pw@mail.example.com:587/?from=a@example.com&to=b@example.com"
http: {public_url: "https://flowgate.example.com"}
`))
	require.NoError(t, err, "a named destination may hold literal secrets")
	require.Equal(t, "https://flowgate.example.com", fc.InProcess().HTTP.PublicURL, "a command's gateway links to the daemon's run center")
	_, err = gateway.New(gateway.Config{Home: t.TempDir(), File: fc})
	require.ErrorContains(t, err, "gateway config: notify.ops: the destination ops refers to ${FG_TEST_UNSET_TOKEN}, which is not set in the gateway's environment")
	require.NotContains(t, err.Error(), "literal-s3cret")

	t.Setenv("FG_TEST_UNSET_TOKEN", "tok")
	g, err := gateway.New(gateway.Config{Home: t.TempDir(), File: fc})
	require.NoError(t, err)
	require.Equal(t, []string{"mail", "ops"}, g.Book().Names())
	shown, _ := g.Book().Shown("ops")
	require.Equal(t, "https://hooks.example.com/***?token=${FG_TEST_UNSET_TOKEN}", shown)
}
