package engine_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/sdk"
)

// claimingEngines returns two engines on one store: on etcd, two stores
// (two gateways) on the same prefix; on bbolt, one engine twice.
func claimingEngines(t *testing.T) (a, b *engine.Engine) {
	t.Helper()
	st := openStore(t)
	other := st
	if es, ok := st.(*etcd.Store); ok {
		s, err := etcd.New(etcdServer.Client(), etcd.Options{Prefix: es.Prefix()})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		other = s
	}
	engines := make([]*engine.Engine, 2)
	for i, s := range []store.Store{st, other} {
		eng, err := engine.New(s, engine.Config{})
		require.NoError(t, err)
		engines[i] = eng
	}
	return engines[0], engines[1]
}

// TestStartTaskClaimsOnce: two gateways start the same queued tasks at
// once; each task is taken by exactly one (a guarded write), which it
// names, and the other is refused.
func TestStartTaskClaimsOnce(t *testing.T) {
	t.Parallel()
	a, b := claimingEngines(t)
	const n = 30
	var ids []string
	for i := range n {
		task, _, err := a.CreateTask(engine.CreateTaskInput{OwnerKey: fmt.Sprintf("claim-%d", i), Spec: sdk.TaskSpec{Shell: "true"}})
		require.NoError(t, err)
		ids = append(ids, task.ID)
	}
	var (
		mu     sync.Mutex
		claims = map[string][]string{}
		wg     sync.WaitGroup
	)
	for name, eng := range map[string]*engine.Engine{"node-a.1": a, "node-b.2": b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, id := range ids {
				_, err := eng.StartTask(id, engine.StartInput{Gateway: name})
				if errors.Is(err, sdk.ErrIllegalTransition) {
					continue
				}
				if err != nil {
					t.Errorf("start task %s on %s: %v", id, name, err)
					return
				}
				mu.Lock()
				claims[id] = append(claims[id], name)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, claims, n)
	for _, id := range ids {
		require.Len(t, claims[id], 1, "task %s was claimed by %v", id, claims[id])
		got, err := a.GetTask(id)
		require.NoError(t, err)
		require.Equal(t, 1, got.Attempts)
		require.Equal(t, claims[id][0], got.Gateway, "the record names the gateway that took it")
	}
}

// TestRunnableTasksByLabel: a task that asks for a label (--on) is
// runnable only for a runner that carries it; a bad label is refused.
func TestRunnableTasksByLabel(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	gpu, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "gpu", Spec: sdk.TaskSpec{Shell: "true", On: "gpu"}})
	require.NoError(t, err)
	anyone, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "any", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	ids := func(labels ...string) []string {
		tasks, _, err := eng.RunnableTasks(0, labels...)
		require.NoError(t, err)
		var out []string
		for _, task := range tasks {
			out = append(out, task.ID)
		}
		return out
	}
	require.Equal(t, []string{anyone.ID}, ids())
	require.Equal(t, []string{anyone.ID}, ids("cpu"))
	require.ElementsMatch(t, []string{gpu.ID, anyone.ID}, ids("cpu", "gpu"))
	_, _, err = eng.CreateTask(engine.CreateTaskInput{OwnerKey: "bad", Spec: sdk.TaskSpec{Shell: "true", On: "gpu, cpu"}})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "is not a label")
}
