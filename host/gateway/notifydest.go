package gateway

import (
	"context"
	"strconv"
	"time"

	"github.com/flowgate/flowgate/host/notify/dest"
)

// What commands ask of notice destinations (package dest owns them): to
// show one without its secrets, to check one or a notice template before
// a flow or job names it, and to send a test message.

// RedactDest returns destination spec as it may be shown: its secrets
// masked, a name and a command as written (dest.Redact).
func RedactDest(spec string) string { return dest.Redact(spec) }

// RedactNamedDest returns the spec of a destination the gateway config
// names as it may be shown: scheme and host only, since the whole URL is
// the config file's secret (dest.RedactAll).
func RedactNamedDest(spec string) string { return dest.RedactAll(spec) }

// CheckDest refuses a destination spec that cannot be right for any
// gateway, naming what is wrong and what to write instead (dest.Check).
func CheckDest(spec string) error { return dest.Check(spec) }

// CheckNotifyTemplate refuses a notice template that does not parse,
// naming the line and what is wrong (dest.ParseTemplate).
func CheckNotifyTemplate(text string) error {
	_, err := dest.ParseTemplate(text)
	return err
}

// SendTestNotice sends a test message, in the default template, to
// destination spec through book (FileConfig.Book), and returns the
// message's key. It fails when the destination did not take it.
func SendTestNotice(ctx context.Context, book *dest.Book, spec string) (key string, err error) {
	now := time.Now()
	n := dest.Notice{Key: "test/" + strconv.FormatInt(now.UnixNano(), 10), Event: "notify.test", Status: "test",
		Goal: "flowgate notify test: this destination works"}
	n.SetTimes(now, now, now)
	tpl, _ := dest.ParseTemplate("")
	text, _ := tpl.Render(n)
	return n.Key, book.Send(ctx, spec, dest.Message{Notice: n, Text: text})
}
