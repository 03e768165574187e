package dest_test

import (
	"context"
	"mime"
	"net/mail"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/notify/dest/desttest"
)

// TestSendSMTP: an smtp:// destination mails the text, its headline as
// the subject, with the password from a ${VAR} ref.
func TestSendSMTP(t *testing.T) {
	t.Parallel()
	sink := desttest.NewSMTPSink(t)
	b := book(t, nil, map[string]string{"SMTP_PASSWORD": "pw-1"})
	spec := "smtp://bot:${SMTP_PASSWORD}@" + sink.Addr() + "/?from=flowgate@example.com&to=ops@example.com&auth=none&encryption=none&usestarttls=no"
	require.NoError(t, dest.Check(spec))
	require.NoError(t, b.Send(context.Background(), spec, dest.Message{Notice: failed, Text: "❌ failed: nightly backup\nExit code: 3"}))
	raw := <-sink.Got
	m, err := mail.ReadMessage(strings.NewReader(raw))
	require.NoError(t, err)
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	require.NoError(t, err)
	require.Equal(t, "❌ failed: nightly backup", subject)
	require.Contains(t, raw, "Exit code: 3")
	require.Equal(t, "ops@example.com", m.Header.Get("To"))
}
