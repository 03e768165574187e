package cli_test

import (
	"encoding/json"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/notify/dest/desttest"
)

// TestNotifyListAndTest: notify list shows the config's named
// destinations with everything but scheme and host masked; notify test
// sends a test message now, to a named destination (its ${VAR} read from
// the environment) and to a mail destination given as a URL, and never
// prints a secret; a destination that fails or is unknown says so.
func TestNotifyListAndTest(t *testing.T) {
	home := t.TempDir()
	rcv, down := desttest.NewReceiver(t, 0), desttest.NewReceiver(t, 100)
	sink := desttest.NewSMTPSink(t)
	const literal, fromEnv = "literal-s3cret-path", "env-s3cret-token"
	t.Setenv("FG_CLI_HOOK_TOKEN", fromEnv)
	config := "notify:\n" +
		"  hook: \"" + rcv.URL + "/" + literal + "?token=${FG_CLI_HOOK_TOKEN}\"\n" +
		"  down: \"" + down.URL + "/" + literal + "\"\n" +
		"  mail: \"" + sink.URL("flowgate@example.com", "ops@example.com") + "\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte(config), 0o600))

	code, out, errOut := run(t, home, "notify", "list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Destinations: 3")
	require.Contains(t, out, "hook  "+rcv.URL+"/***?token=${FG_CLI_HOOK_TOKEN}")
	code, out, _ = run(t, home, "notify", "list", "--json")
	require.Equal(t, 0, code)
	var list struct {
		Count        int
		Destinations []struct{ Name, Dest string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Equal(t, 3, list.Count)
	require.Equal(t, "down", list.Destinations[0].Name)

	code, out, errOut = run(t, home, "notify", "test", "hook", "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"sent": true`)
	posts := rcv.Posts()
	require.Len(t, posts, 1)
	require.Equal(t, "token="+fromEnv, posts[0].Query, "the ref is expanded when sending")
	require.Contains(t, posts[0].Body, `"event":"notify.test"`)

	code, out, errOut = run(t, home, "notify", "test", sink.URL("flowgate@example.com", "dev@example.com"))
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Sent a test message to smtp://")
	m, err := mail.ReadMessage(strings.NewReader(<-sink.Got))
	require.NoError(t, err)
	require.Equal(t, "dev@example.com", m.Header.Get("To"))
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	require.NoError(t, err)
	require.Equal(t, "▶ test: flowgate notify test: this destination works", subject, "the headline is the subject")

	code, _, errOut = run(t, home, "notify", "test", "down")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "the test message to down was not delivered: webhook destination down answered 503")

	code, _, errOut = run(t, home, "notify", "test", "nope")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `no destination is named "nope" in the gateway config's notify: map; the names are down, hook, mail`)
	code, _, errOut = run(t, home, "notify", "test", "https://u:pw@example.com/x")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "literal password; write it as ${VAR}")

	all := strings.Join([]string{out, errOut}, "\n")
	for _, args := range [][]string{{"notify", "list"}, {"notify", "list", "--json"}, {"notify", "test", "down"}} {
		_, o, e := run(t, home, args...)
		all += o + e
	}
	require.NotContains(t, all, literal)
	require.NotContains(t, all, fromEnv)
}
