package dest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/notify/dest/desttest"
)

// TestSecretsNeverShown: neither a ${VAR} ref's value nor a named
// destination's URL appears in an error, even when the receiver quotes
// the URL back or cannot be reached, nor in what Shown lists.
func TestSecretsNeverShown(t *testing.T) {
	t.Parallel()
	rcv := desttest.NewReceiver(t, 100)
	const refSecret, namedSecret = "ref-s3cret-value", "named-s3cret-path"
	named := map[string]string{
		"ops":  rcv.URL + "/hook/" + namedSecret + "?token=" + namedSecret,
		"gone": "generic+http://127.0.0.1:1/" + namedSecret,
	}
	b := book(t, named, map[string]string{"TOK": refSecret})
	var errs []string
	for _, spec := range []string{"ops", "gone", rcv.URL + "/x?token=${TOK}", "generic+" + rcv.URL + "/${TOK}", "generic+http://127.0.0.1:1/x?token=${TOK}", "cmd:echo $0 ${TOK} >&2; exit 1"} {
		err := b.Send(context.Background(), spec, dest.Message{Notice: failed, Text: "hi"})
		require.Error(t, err, spec)
		errs = append(errs, err.Error())
	}
	for _, name := range b.Names() {
		shown, ok := b.Shown(name)
		require.True(t, ok)
		errs = append(errs, shown)
	}
	all := strings.Join(errs, "\n")
	require.NotContains(t, all, refSecret)
	require.NotContains(t, all, namedSecret)
	require.NotContains(t, all, rcv.URL+"/hook")
	require.Contains(t, all, "destination ops", "a named destination's errors name it")
	require.Contains(t, all, "503 Service Unavailable", "errors still say why")
}

// TestNewBookRefusals: a named destination that cannot work stops the
// gateway's start with an error naming its key, and never its secret;
// an unknown name is an error listing the names.
func TestNewBookRefusals(t *testing.T) {
	t.Parallel()
	env := func(k string) (string, bool) { return map[string]string{"SET": "x"}[k], k == "SET" }
	for named, want := range map[string]string{
		"ops: https://example.com/${UNSET}": "notify.ops: the destination ops refers to ${UNSET}, which is not set",
		"ops: fax://s3cret":                 `notify.ops: the destination scheme "fax" is unknown`,
		"ops: other":                        `notify.ops: "other" names another destination`,
		"bad name: https://example.com":     `notify.bad name: "bad name" is not a destination name`,
		"ops: smtp://mail.example.com/":     "notify.ops: smtp",
	} {
		k, v, _ := strings.Cut(named, ": ")
		_, err := dest.NewBook(dest.Config{Named: map[string]string{k: v}, Lookup: env})
		require.ErrorContains(t, err, want, named)
		require.NotContains(t, err.Error(), "s3cret")
	}
	b, err := dest.NewBook(dest.Config{Named: map[string]string{"ops": "https://example.com/x", "dev": "cmd:true"}})
	require.NoError(t, err)
	require.ErrorContains(t, b.Check("nope"), `no destination is named "nope" in the gateway config's notify: map; the names are dev, ops`)
	require.NoError(t, b.Check("ops"))
	require.ErrorContains(t, b.Send(context.Background(), "nope", dest.Message{}), "the names are dev, ops")
}
