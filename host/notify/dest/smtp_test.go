package dest_test

import (
	"bufio"
	"context"
	"mime"
	"net"
	"net/mail"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/notify/dest"
)

// smtpSink is a minimal SMTP server on loopback, without TLS or auth,
// that accepts one message and hands it over on got.
type smtpSink struct {
	ln  net.Listener
	got chan string
}

func newSMTPSink(t *testing.T) *smtpSink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &smtpSink{ln: ln, got: make(chan string, 1)}
	t.Cleanup(func() { _ = ln.Close() })
	go s.serve()
	return s
}

func (s *smtpSink) addr() string { return s.ln.Addr().String() }

// serve answers one session after another, the SMTP dialogue a client
// without TLS or auth needs: EHLO, MAIL, RCPT, DATA, QUIT.
func (s *smtpSink) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.session(c)
	}
}

func (s *smtpSink) session(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(line string) { _, _ = c.Write([]byte(line + "\r\n")) }
	say("220 sink ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"):
			say("250-sink")
			say("250 8BITMIME")
		case strings.HasPrefix(cmd, "HELO"), strings.HasPrefix(cmd, "MAIL"), strings.HasPrefix(cmd, "RCPT"), strings.HasPrefix(cmd, "RSET"), strings.HasPrefix(cmd, "NOOP"):
			say("250 ok")
		case cmd == "DATA":
			say("354 go on")
			var msg strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" || l == ".\n" {
					break
				}
				msg.WriteString(strings.TrimPrefix(l, "."))
			}
			select {
			case s.got <- msg.String():
			default:
			}
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("502 not here")
		}
	}
}

// TestSendSMTP: an smtp:// destination mails the text, its headline as
// the subject, with the password from a ${VAR} ref.
func TestSendSMTP(t *testing.T) {
	t.Parallel()
	sink := newSMTPSink(t)
	b := book(t, nil, map[string]string{"SMTP_PASSWORD": "pw-1"})
	spec := "smtp://bot:${SMTP_PASSWORD}@" + sink.addr() + "/?from=flowgate@example.com&to=ops@example.com&auth=none&encryption=none&usestarttls=no"
	require.NoError(t, dest.Check(spec))
	require.NoError(t, b.Send(context.Background(), spec, dest.Message{Notice: failed, Text: "❌ failed: nightly backup\nExit code: 3"}))
	raw := <-sink.got
	m, err := mail.ReadMessage(strings.NewReader(raw))
	require.NoError(t, err)
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	require.NoError(t, err)
	require.Equal(t, "❌ failed: nightly backup", subject)
	require.Contains(t, raw, "Exit code: 3")
	require.Equal(t, "ops@example.com", m.Header.Get("To"))
}
