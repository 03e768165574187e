package notify_test

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
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/notify"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// TestWebhookRetriedUntilDelivered: a webhook that fails is tried again
// after the backoff with the same idempotency key, and the notice is gone
// once a 2xx answer comes; the body carries the task's record.
func TestWebhookRetriedUntilDelivered(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		keys   []string
		bodies []map[string]any
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		keys, bodies = append(keys, r.Header.Get("Idempotency-Key")), append(bodies, m)
		if len(keys) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()

	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true", OnFinish: &sdk.FinishNotify{Webhook: srv.URL}}})
	require.NoError(t, err)
	_, err = eng.CancelTask(task.ID) // a queued task is cancelled at once
	require.NoError(t, err)

	now := time.Now()
	n := notify.New(eng, notify.Config{Now: func() time.Time { return now }})
	require.ErrorContains(t, n.DeliverOnce(context.Background()), "503")
	require.NoError(t, n.DeliverOnce(context.Background()), "not due again yet")
	require.Len(t, keys, 1)

	now = now.Add(time.Minute)
	require.NoError(t, n.DeliverOnce(context.Background()))
	require.Equal(t, []string{task.ID + "/aborted", task.ID + "/aborted"}, keys)
	require.Equal(t, "aborted", bodies[1]["status"])
	require.Equal(t, task.ID, bodies[1]["task"].(map[string]any)["id"])
	due, err := eng.DueNotices(now.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Empty(t, due, "a delivered notice is removed")
}

// TestFlowNoticeDelivered: a flow's notice goes out as flow.finished with
// the flow's id, status and final record, its command getting
// FLOWGATE_FLOW_ID and FLOWGATE_FLOW_STATUS.
// cancelledFlow is a flow, cancelled, whose finish notice runs command,
// in an engine on a bbolt file of its own.
func cancelledFlow(t *testing.T, command string) (*engine.Engine, *sdk.Flow) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g", OnFinish: &sdk.FinishNotify{Command: command}})
	require.NoError(t, err)
	_, err = eng.CancelFlow(f.ID, "")
	require.NoError(t, err)
	return eng, f
}

func TestFlowNoticeDelivered(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "notice")
	eng, f := cancelledFlow(t, `{ echo "$FLOWGATE_NOTICE_KEY $FLOWGATE_FLOW_ID $FLOWGATE_FLOW_STATUS"; cat; } > `+out)

	require.NoError(t, notify.New(eng, notify.Config{}).DeliverOnce(context.Background()))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	head, body, _ := strings.Cut(string(b), "\n")
	require.Equal(t, f.ID+"/aborted "+f.ID+" aborted", head)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	require.Equal(t, notify.EventFlowFinished, m["event"])
	require.Equal(t, f.ID, m["flow_id"])
	require.Equal(t, "cancelled", m["flow"].(map[string]any)["status"])
	require.NotContains(t, m, "task_id")
	due, err := eng.DueNotices(time.Now().Add(time.Hour), 10)
	require.NoError(t, err)
	require.Empty(t, due, "a delivered notice is removed")
}

// leadership is a scheduler.Leader that leads while leads is set.
type leadership struct{ leads bool }

func (l *leadership) Fence() (store.Fence, bool) { return store.Fence{}, l.leads }

// Under a Leader, notices are sent only while it leads, so that of the
// gateways sharing a store one sends each notice.
func TestNoticesSentOnlyByTheLeader(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "notice")
	eng, _ := cancelledFlow(t, `cat > `+out)

	l := &leadership{}
	n := notify.New(eng, notify.Config{Leader: l})
	require.NoError(t, n.DeliverOnce(context.Background()))
	require.NoFileExists(t, out, "a gateway that does not lead sent a notice")
	l.leads = true
	require.NoError(t, n.DeliverOnce(context.Background()))
	require.FileExists(t, out)
}
