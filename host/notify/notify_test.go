package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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
