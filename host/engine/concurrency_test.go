package engine_test

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// TestConcurrentGuardedWritesLoseNothing runs 16 writers doing
// read-modify-write with the expected revision on one flow. Each success
// increments a counter in the state, so a lost update would show as a
// counter below the number of successes.
func TestConcurrentGuardedWritesLoseNothing(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g", State: json.RawMessage(`{"n":0}`)})
	require.NoError(t, err)

	const writers, attempts = 16, 40
	var (
		mu        sync.Mutex
		successes int
		failures  []string
		wg        sync.WaitGroup
	)
	fail := func(s string) { mu.Lock(); failures = append(failures, s); mu.Unlock() }
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < attempts; i++ {
				cur, err := eng.GetFlow(f.ID)
				if err != nil {
					fail(err.Error())
					return
				}
				var st struct{ N int }
				if err := json.Unmarshal(cur.State, &st); err != nil {
					fail(err.Error())
					return
				}
				next, _ := json.Marshal(map[string]int{"n": st.N + 1})
				_, err = eng.UpdateFlow(f.ID, cur.Revision, engine.FlowPatch{State: next})
				var rc *sdk.RevisionConflictError
				switch {
				case err == nil:
					mu.Lock()
					successes++
					mu.Unlock()
				case errors.As(err, &rc):
					if rc.Current == nil || rc.Current.Revision <= cur.Revision {
						fail("a conflict must carry the newer current record")
					}
				default:
					fail(err.Error())
				}
			}
		}()
	}
	wg.Wait()
	require.Empty(t, failures)

	final, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	var st struct{ N int }
	require.NoError(t, json.Unmarshal(final.State, &st))
	require.Positive(t, successes)
	require.Equal(t, int64(successes)+1, final.Revision, "revision counts the create and the successful writes")
	require.Equal(t, successes, st.N, "no update is lost")
}
