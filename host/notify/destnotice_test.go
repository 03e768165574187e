package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/notify"
	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/notify/dest/desttest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// got returns the Idempotency-Keys and bodies r received.
func got(r *desttest.Receiver) (keys, bodies []string) {
	for _, p := range r.Posts() {
		keys, bodies = append(keys, p.Key), append(bodies, p.Body)
	}
	return keys, bodies
}

// failedTask is a task that failed with exit code 2 and wrote to stderr
// in home, in an engine on a bbolt file of its own.
func failedTask(t *testing.T, home string) (*engine.Engine, *stored.Task) {
	t.Helper()
	_, eng := newEngine(t)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Label: "nightly backup", Spec: sdk.TaskSpec{Shell: "backup"}})
	require.NoError(t, err)
	task, err = eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	code := 2
	task, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, Attempt: task.Attempts, ExitCode: &code, Error: "exit status 2"})
	require.NoError(t, err)
	dir := runner.LogDir(home, task.ID, task.Attempts)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stderr"), []byte("starting\nrsync: connection refused\n"), 0o600))
	return eng, task
}

// newEngine is an engine on a bbolt file of its own, and its store.
func newEngine(t *testing.T) (*store.Bolt, *engine.Engine) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	return st, eng
}

// TestDestNoticeRetriedThenDelivered: a destination that fails twice
// then accepts gets the notice on the third try, every try with the same
// key, and the notice is gone; what it gets is the documented notice
// JSON, with the failure's stderr tail and the run center link.
func TestDestNoticeRetriedThenDelivered(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	eng, task := failedTask(t, home)
	rcv := desttest.NewReceiver(t, 2)
	key := task.FlowID + "/failed/0"
	require.NoError(t, eng.QueueNotice(engine.Notice{Key: key, FlowID: task.FlowID, Event: "flow.finished", Status: "failed", PreviousStatus: "running", Dest: rcv.URL + "/hook"}))

	now := time.Now()
	n := notify.New(eng, notify.Config{Now: func() time.Time { return now }, Home: home, PublicURL: "https://flowgate.example.com/"})
	for range 2 {
		require.ErrorContains(t, n.DeliverOnce(context.Background()), "503")
		require.NoError(t, n.DeliverOnce(context.Background()), "not due again yet")
		now = now.Add(time.Hour)
	}
	require.NoError(t, n.DeliverOnce(context.Background()))
	keys, bodies := got(rcv)
	require.Equal(t, []string{key, key, key}, keys)
	var v dest.Notice
	require.NoError(t, json.Unmarshal([]byte(bodies[2]), &v))
	require.Equal(t, key, v.Key)
	require.Equal(t, "failed", v.Status)
	require.Equal(t, "running", v.PreviousStatus)
	require.Equal(t, task.ID, v.TaskID)
	require.Equal(t, "nightly backup", v.Goal)
	require.Equal(t, 2, *v.ExitCode)
	require.Equal(t, []string{"starting", "rsync: connection refused"}, v.StderrTail)
	require.Equal(t, "https://flowgate.example.com/flows/"+task.FlowID, v.URL)
	due, err := eng.DueNotices(now.Add(24*time.Hour), 0)
	require.NoError(t, err)
	require.Empty(t, due, "a delivered notice is removed")
}

// TestDestNoticeGivenUp: at the retry bound a notice is given up: gone
// from the outbox, a notify.failed entry in its flow's history, and a
// failed notice for the audit; neither the log nor the history holds a
// secret of the destination.
func TestDestNoticeGivenUp(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	eng, task := failedTask(t, home)
	rcv := desttest.NewReceiver(t, 100)
	const secret = "s3cret-token-value"
	book, err := dest.NewBook(dest.Config{Named: map[string]string{"ops": rcv.URL + "/ops?token=" + secret},
		Lookup: func(k string) (string, bool) { return secret, k == "HOOK_TOKEN" }})
	require.NoError(t, err)
	for i, d := range []string{"ops", rcv.URL + "/x?token=${HOOK_TOKEN}"} {
		require.NoError(t, eng.QueueNotice(engine.Notice{Key: task.FlowID + "/failed/" + string(rune('a'+i)), FlowID: task.FlowID, Event: "flow.finished", Status: "failed", Dest: d}))
	}
	var logs bytes.Buffer
	now := time.Now()
	n := notify.New(eng, notify.Config{Now: func() time.Time { return now }, Book: book, Attempts: 3,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace})})
	for range 3 {
		require.Error(t, n.DeliverOnce(context.Background()))
		now = now.Add(2 * notify.DefaultMaxBackoff)
	}
	require.NoError(t, n.DeliverOnce(context.Background()), "nothing is left to send")
	keys, _ := got(rcv)
	require.Len(t, keys, 6, "three tries each")

	failed, err := eng.FailedNotices()
	require.NoError(t, err)
	require.Len(t, failed, 2)
	page, err := eng.History(task.FlowID, 0, 0)
	require.NoError(t, err)
	var entries []string
	for _, e := range page.Entries {
		if e.Kind == engine.HistoryNotifyFailed {
			entries = append(entries, e.Summary+string(e.Data))
		}
	}
	require.Len(t, entries, 2)
	require.Contains(t, entries[0]+entries[1], "to ops after 3 attempts")
	require.Contains(t, entries[0]+entries[1], "token=${HOOK_TOKEN}")
	all := logs.String() + strings.Join(entries, "\n") + failed[0].LastError + failed[1].LastError
	require.Contains(t, logs.String(), "notice given up")
	require.NotContains(t, all, secret)
	require.NotContains(t, all, rcv.URL+"/ops", "a named destination's URL is never shown")
}

// TestDestNoticeTemplate: a chat destination gets the notice's template
// rendered; a template that fails falls back to the default text and
// the log says so.
func TestDestNoticeTemplate(t *testing.T) {
	t.Parallel()
	eng, task := failedTask(t, t.TempDir())
	rcv := desttest.NewReceiver(t, 0)
	require.NoError(t, eng.QueueNotice(engine.Notice{Key: "k1", FlowID: task.FlowID, Event: "flow.finished", Status: "failed",
		Dest: "generic+" + rcv.URL + "/chat", Template: "{{.Status}} after {{.Duration}}: {{.Goal}}"}))
	require.NoError(t, eng.QueueNotice(engine.Notice{Key: "k2", FlowID: task.FlowID, Event: "flow.finished", Status: "failed",
		Dest: "generic+" + rcv.URL + "/chat", Template: "{{.Nope}}"}))
	var logs bytes.Buffer
	n := notify.New(eng, notify.Config{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs})})
	require.NoError(t, n.DeliverOnce(context.Background()))
	_, bodies := got(rcv)
	require.Len(t, bodies, 2)
	require.Contains(t, bodies[0], "failed after 0s: nightly backup")
	require.Contains(t, bodies[1], "❌ failed: nightly backup")
	require.Contains(t, logs.String(), "notice template failed")
}

// TestNoticeWithNoDestinationGivenUp: a queued notice that names
// neither a destination nor a finish target (damage, or a newer
// version's record) is given up, not dereferenced or retried forever.
func TestNoticeWithNoDestinationGivenUp(t *testing.T) {
	t.Parallel()
	st, eng := newEngine(t)
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("notice/k", []byte(`{"key":"k","status":"failed","to":null,"next_at":"2000-01-01T00:00:00Z","queued_at":"2000-01-01T00:00:00Z"}`))
		return err
	}))
	require.NoError(t, notify.New(eng, notify.Config{}).DeliverOnce(context.Background()))
	failed, err := eng.FailedNotices()
	require.NoError(t, err)
	require.Len(t, failed, 1)
	require.Equal(t, "the notice names no destination", failed[0].LastError)
}
