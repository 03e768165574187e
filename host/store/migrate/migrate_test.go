package migrate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
	"github.com/flowgate/flowgate/host/store/migrate"
	"github.com/flowgate/flowgate/sdk"
)

var server *etcdtest.Server

func TestMain(m *testing.M) {
	os.Exit(etcdtest.Main(m, &server))
}

func openBolt(t *testing.T) *store.Bolt {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// fill writes what an installation holds: flows moved through several
// revisions by the engine, and raw keys over more than one batch, with
// awkward bytes, an empty value and a large one.
func fill(t *testing.T, st store.Store) []*sdk.Flow {
	t.Helper()
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	var flows []*sdk.Flow
	for i := range 5 {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: fmt.Sprintf("owner-%d", i), ControllerID: "ctl", Goal: "migrate me"})
		require.NoError(t, err)
		for range i {
			f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{CurrentStep: ptr(fmt.Sprintf("step at %d", f.Revision))})
			require.NoError(t, err)
		}
		flows = append(flows, f)
	}
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		for i := range 250 {
			if _, err := tx.Put(fmt.Sprintf("raw/%03d", i), []byte(strings.Repeat("x", i))); err != nil {
				return err
			}
		}
		for _, k := range []string{"raw/\xff", "raw/\xff\xff", "raw/empty"} {
			if _, err := tx.Put(k, nil); err != nil {
				return err
			}
		}
		_, err := tx.Put("raw/big", make([]byte, store.MaxValueSize))
		return err
	}))
	return flows
}

func ptr[T any](v T) *T { return &v }

// requireFlows checks that the engine over st reads flows as they were.
func requireFlows(t *testing.T, st store.Store, want []*sdk.Flow) {
	t.Helper()
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	for _, f := range want {
		got, err := eng.GetFlow(f.ID)
		require.NoError(t, err)
		require.Equal(t, f, got)
	}
	// And the copy takes guarded writes at the copied revision.
	_, err = eng.UpdateFlow(want[4].ID, want[4].Revision, engine.FlowPatch{CurrentStep: ptr("after the move")})
	require.NoError(t, err)
}

func TestBoltToEtcdAndBack(t *testing.T) {
	t.Parallel()
	bolt := openBolt(t)
	flows := fill(t, bolt)
	require.Equal(t, int64(5), flows[4].Revision)

	etcdStore := server.Open(t)
	var rounds []int
	rep, err := migrate.Copy(t.Context(), etcdStore, bolt, migrate.Options{Progress: func(r, n int) { rounds = append(rounds, r) }})
	require.NoError(t, err)
	require.Equal(t, 254+len(flows), rep.Keys-countIndexes(t, bolt))
	require.GreaterOrEqual(t, rep.MaxRevision, int64(5))
	require.Len(t, rounds, int(rep.MaxRevision))
	require.NoError(t, migrate.Verify(t.Context(), etcdStore, bolt))

	back := openBolt(t)
	rep2, err := migrate.Copy(t.Context(), back, etcdStore, migrate.Options{})
	require.NoError(t, err)
	require.Equal(t, rep, rep2)
	require.NoError(t, migrate.Verify(t.Context(), back, bolt), "the round trip is faithful")

	requireFlows(t, etcdStore, flows)
	requireFlows(t, back, flows)
}

// countIndexes counts the keys that are neither flows nor raw/: indexes,
// history and the like the engine writes beside each flow.
func countIndexes(t *testing.T, st store.Store) int {
	n := 0
	require.NoError(t, st.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("", store.ScanOptions{}, func(it store.Item) bool {
			if !strings.HasPrefix(it.Key, "raw/") && !strings.HasPrefix(it.Key, "flow/") {
				n++
			}
			return true
		})
	}))
	return n
}

func TestCopyRefusesANonEmptyTarget(t *testing.T) {
	t.Parallel()
	src := openBolt(t)
	fill(t, src)
	for name, dst := range map[string]store.Store{"etcd": server.Open(t), "bolt": openBolt(t)} {
		require.NoError(t, dst.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("someone/else", []byte("x")); return err }))
		_, err := migrate.Copy(t.Context(), dst, src, migrate.Options{})
		require.ErrorIs(t, err, migrate.ErrNotEmpty, name)
		require.ErrorContains(t, err, `"someone/else"`)
		require.ErrorContains(t, err, "copy only into an empty store")
		n := 0
		require.NoError(t, dst.View(t.Context(), func(tx store.ReadTx) error {
			return tx.Scan("", store.ScanOptions{}, func(store.Item) bool { n++; return true })
		}))
		require.Equal(t, 1, n, "%s: nothing was written", name)
	}
}

func TestVerifyNamesTheFirstDifference(t *testing.T) {
	t.Parallel()
	put := func(st store.Store, kv ...string) {
		require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
			for i := 0; i < len(kv); i += 2 {
				if _, err := tx.Put(kv[i], []byte(kv[i+1])); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	a, b := server.Open(t), openBolt(t)
	put(a, "k/1", "x", "k/2", "y")
	put(b, "k/1", "x", "k/2", "y")
	require.NoError(t, migrate.Verify(t.Context(), a, b))
	put(b, "k/2", "y")
	require.ErrorContains(t, migrate.Verify(t.Context(), a, b), `key "k/2" is at revision 1 in the target and 2 in the source`)
	put(a, "k/2", "z")
	require.ErrorContains(t, migrate.Verify(t.Context(), a, b), `key "k/2" has another value`)

	c, d := server.Open(t), openBolt(t)
	put(c, "k/1", "x", "k/2", "y")
	put(d, "k/1", "x")
	require.ErrorContains(t, migrate.Verify(t.Context(), c, d), `after key "" the target holds 2 keys in the next page and the source 1`)
	put(d, "k/0", "w")
	require.ErrorContains(t, migrate.Verify(t.Context(), c, d), `the target has key "k/1" where the source has "k/0"`)
}
