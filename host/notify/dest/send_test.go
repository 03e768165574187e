package dest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/notify/dest/desttest"
)

func book(t *testing.T, named map[string]string, env map[string]string) *dest.Book {
	t.Helper()
	b, err := dest.NewBook(dest.Config{Named: named, Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	require.NoError(t, err)
	return b
}

var failed = dest.Notice{Key: "f1/failed", Event: "flow.finished", Status: "failed", FlowID: "f1", Goal: "nightly backup"}

// TestSendWebhook: an https destination gets the notice JSON with its
// key as Idempotency-Key; a ${VAR} ref is expanded at send time.
func TestSendWebhook(t *testing.T) {
	t.Parallel()
	rcv := desttest.NewReceiver(t, 0)
	b := book(t, nil, map[string]string{"HOOK_TOKEN": "tok-123"})
	require.NoError(t, b.Send(context.Background(), rcv.URL+"/hook?token=${HOOK_TOKEN}", dest.Message{Notice: failed, Text: "ignored"}))
	got := rcv.Posts()
	require.Len(t, got, 1)
	require.Equal(t, "f1/failed", got[0].Key)
	require.Equal(t, "token=tok-123", got[0].Query)
	var n dest.Notice
	require.NoError(t, json.Unmarshal([]byte(got[0].Body), &n))
	require.Equal(t, failed, n)
}

// TestSendCommand: a cmd: destination reads the notice JSON on stdin
// and gets FLOWGATE_NOTICE_KEY, and nothing of the gateway's other
// environment.
func TestSendCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("FG_DEST_LEAK", "leaked")
	b := book(t, map[string]string{"log": "cmd:cat > " + filepath.Join(dir, "in.json") + "; env > " + filepath.Join(dir, "env")}, nil)
	require.NoError(t, b.Send(context.Background(), "log", dest.Message{Notice: failed}))
	in, err := os.ReadFile(filepath.Join(dir, "in.json"))
	require.NoError(t, err)
	require.Contains(t, string(in), `"key":"f1/failed"`)
	env, err := os.ReadFile(filepath.Join(dir, "env"))
	require.NoError(t, err)
	require.Contains(t, string(env), "FLOWGATE_NOTICE_KEY=f1/failed")
	require.NotContains(t, string(env), "FG_DEST_LEAK")

	err = b.Send(context.Background(), "cmd:echo nope >&2; exit 4", dest.Message{Notice: failed})
	require.ErrorContains(t, err, "exit status 4")
	require.ErrorContains(t, err, "stderr: nope")
}

// TestSendServices: generic+http and ntfy (over http) are sent the text
// through shoutrrr, its first line as the title.
func TestSendServices(t *testing.T) {
	t.Parallel()
	rcv := desttest.NewReceiver(t, 0)
	b := book(t, nil, nil)
	msg := dest.Message{Notice: failed, Text: "❌ failed: nightly backup\nDuration: 3s"}
	require.NoError(t, b.Send(context.Background(), "generic+"+rcv.URL+"/generic", msg))
	require.NoError(t, b.Send(context.Background(), "ntfy://"+rcv.Host()+"/builds?scheme=http", msg))
	got := rcv.Posts()
	require.Len(t, got, 2)
	require.Equal(t, "/generic", got[0].Path)
	require.Contains(t, got[0].Body, "Duration: 3s")
	require.Equal(t, "/builds", got[1].Path, "ntfy posts to its topic")
	require.Contains(t, got[1].Body, "Duration: 3s")
}
