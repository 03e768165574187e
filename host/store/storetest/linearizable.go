package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/stretchr/testify/require"
)

// register is the model state: one key's revision and value. Revision 0
// means the key does not exist.
type register struct {
	rev   int64
	value string
}

// regInput is a read (cas false) or a guarded write of value at revision
// expected.
type regInput struct {
	cas      bool
	expected int64
	value    string
}

// regOutput is what the store returned: for a read, the register; for a
// guarded write, whether it was applied, the revision it found and the one
// it wrote.
type regOutput struct {
	read     register
	won      bool
	observed int64
	newRev   int64
}

// registerModel is a single key under compare-and-swap on its revision.
func registerModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return register{} },
		Step: func(state, input, output any) (bool, any) {
			st, in, out := state.(register), input.(regInput), output.(regOutput)
			if !in.cas {
				return out.read == st, st
			}
			if st.rev != in.expected {
				return !out.won && out.observed == st.rev, st
			}
			return out.won && out.newRev == st.rev+1, register{rev: st.rev + 1, value: in.value}
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(regInput), output.(regOutput)
			if !in.cas {
				return fmt.Sprintf("read() -> rev %d %q", out.read.rev, out.read.value)
			}
			return fmt.Sprintf("cas(rev %d, %q) -> won %v, saw rev %d", in.expected, in.value, out.won, out.observed)
		},
	}
}

// testLinearizable records concurrent reads and guarded writes of one key
// and checks with porcupine that some order of them, consistent with real
// time, explains every result.
func testLinearizable(t *testing.T, s store.Store) {
	const (
		clients = 8
		ops     = 50
		key     = "lin/register"
	)
	var (
		clock   atomic.Int64 // shared and monotonic: call/return order is exact
		mu      sync.Mutex
		history []porcupine.Operation
		errs    = make(chan error, clients)
		wg      sync.WaitGroup
	)
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 42))
			var lastSeen int64
			for i := range ops {
				in := regInput{cas: rng.IntN(2) == 0, expected: lastSeen, value: fmt.Sprintf("c%d-%d", c, i)}
				if in.cas && rng.IntN(4) == 0 {
					in.expected = max(0, lastSeen-1) // sometimes stale on purpose
				}
				var out regOutput
				call := clock.Add(1)
				err := func() error {
					if !in.cas {
						return s.View(t.Context(), func(tx store.ReadTx) error {
							item, err := tx.Get(key)
							if errors.Is(err, store.ErrKeyNotFound) {
								out.read = register{}
								return nil
							}
							out.read = register{rev: item.Revision, value: string(item.Value)}
							return err
						})
					}
					r, err := compareAndSwap(t.Context(), s, key, in.expected, func([]byte) []byte { return []byte(in.value) })
					out = regOutput{won: r.won, observed: r.observed, newRev: r.newRev}
					return err
				}()
				ret := clock.Add(1)
				if err != nil {
					errs <- err
					return
				}
				if in.cas {
					lastSeen = max(out.observed, out.newRev)
				} else {
					lastSeen = out.read.rev
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, history, clients*ops)
	res := porcupine.CheckOperationsTimeout(registerModel(), history, 30*time.Second)
	require.Equal(t, porcupine.Ok, res, "history of %d operations is not linearizable", len(history))
}
