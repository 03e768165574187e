package dest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/notify/dest"
)

// post is one request a receiver got.
type post struct {
	Path, Query, Key, Title string
	Body                    string
}

// receiver is a loopback HTTP server that records what it is sent and
// answers each request with the next of codes (200 once they run out).
type receiver struct {
	*httptest.Server
	mu    sync.Mutex
	posts []post
	codes []int
}

func newReceiver(t *testing.T, codes ...int) *receiver {
	t.Helper()
	r := &receiver{codes: codes}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.posts = append(r.posts, post{Path: req.URL.Path, Query: req.URL.RawQuery, Key: req.Header.Get("Idempotency-Key"), Title: req.Header.Get("X-Title"), Body: string(b)})
		if len(r.codes) > 0 {
			code := r.codes[0]
			r.codes = r.codes[1:]
			// Echo what was asked, as some services do in errors, so a
			// test sees a secret in the URL would leak through the answer.
			http.Error(w, "refused "+req.URL.String(), code)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}") // ntfy reads a JSON answer
	}))
	t.Cleanup(r.Close)
	return r
}

// got returns the posts so far.
func (r *receiver) got() []post {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]post(nil), r.posts...)
}

// host is the receiver's host:port.
func (r *receiver) host() string { return strings.TrimPrefix(r.URL, "http://") }

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
	rcv := newReceiver(t)
	b := book(t, nil, map[string]string{"HOOK_TOKEN": "tok-123"})
	require.NoError(t, b.Send(context.Background(), rcv.URL+"/hook?token=${HOOK_TOKEN}", dest.Message{Notice: failed, Text: "ignored"}))
	got := rcv.got()
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
	rcv := newReceiver(t)
	b := book(t, nil, nil)
	msg := dest.Message{Notice: failed, Text: "❌ failed: nightly backup\nDuration: 3s"}
	require.NoError(t, b.Send(context.Background(), "generic+"+rcv.URL+"/generic", msg))
	require.NoError(t, b.Send(context.Background(), "ntfy://"+rcv.host()+"/builds?scheme=http", msg))
	got := rcv.got()
	require.Len(t, got, 2)
	require.Equal(t, "/generic", got[0].Path)
	require.Contains(t, got[0].Body, "Duration: 3s")
	require.Equal(t, "/builds", got[1].Path, "ntfy posts to its topic")
	require.Contains(t, got[1].Body, "Duration: 3s")
}
