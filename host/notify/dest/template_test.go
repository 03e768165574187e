package dest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/notify/dest"
)

// TestDefaultTemplate: the default text of a failure has its headline,
// duration, exit code, stderr tail and link; a success has no stderr.
func TestDefaultTemplate(t *testing.T) {
	t.Parallel()
	code := 3
	n := dest.Notice{Key: "f1/failed", Event: "flow.finished", Status: "failed", Goal: "nightly backup", ExitCode: &code,
		StderrTail: dest.Tail([]byte("a\nb\n\nrsync: connection refused\n")), URL: "https://flowgate.example.com/flows/f1"}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	n.SetTimes(start, start.Add(90*time.Second), time.Time{})
	tpl, err := dest.ParseTemplate("")
	require.NoError(t, err)
	text, err := tpl.Render(n)
	require.NoError(t, err)
	require.Equal(t, "❌ failed: nightly backup\nDuration: 1m30s\nExit code: 3\nstderr:\n  a\n  b\n  rsync: connection refused\nhttps://flowgate.example.com/flows/f1", text)

	text, err = tpl.Render(dest.Notice{Status: "succeeded", FlowID: "f2"})
	require.NoError(t, err)
	require.Equal(t, "✅ succeeded: f2", text)
}

// TestTemplateErrors: a template that does not parse is a clear error;
// one that fails on a notice falls back to the default and says so.
func TestTemplateErrors(t *testing.T) {
	t.Parallel()
	_, err := dest.ParseTemplate("{{.Status")
	require.ErrorContains(t, err, "the notify template does not parse")
	require.ErrorContains(t, err, "notice:1: unclosed action")

	tpl, err := dest.ParseTemplate("{{.Nope}}")
	require.NoError(t, err)
	text, err := tpl.Render(dest.Notice{Status: "failed", Goal: "g"})
	require.ErrorContains(t, err, "the default one was used")
	require.Equal(t, "❌ failed: g", text)

	tpl, err = dest.ParseTemplate("{{.Title}} after {{.Duration}} — {{.Output}}")
	require.NoError(t, err)
	n := dest.Notice{Status: "succeeded", Goal: "g", Duration: "2s"}
	n.SetOutput([]byte(`"done"`))
	text, err = tpl.Render(n)
	require.NoError(t, err)
	require.Equal(t, "✅ succeeded: g after 2s — done", text)
}

// TestNoticeBounds: the stderr tail and the output are bounded.
func TestNoticeBounds(t *testing.T) {
	t.Parallel()
	var big []byte
	for range 1000 {
		big = append(big, "line of stderr\n"...)
	}
	require.Len(t, dest.Tail(big), dest.MaxStderrLines)
	var n dest.Notice
	n.SetOutput(big)
	require.Len(t, n.Output, dest.MaxOutputBytes)
	require.True(t, n.Truncated)
}
