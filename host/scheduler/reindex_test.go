package scheduler_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
)

// sharedEtcd is the package's embedded etcd, started by the first test
// that needs one; TestMain stops it.
var sharedEtcd etcdtest.Lazy

func TestMain(m *testing.M) {
	code := m.Run()
	sharedEtcd.Close()
	os.Exit(code)
}

// Reindex writes only the entries that are wrong: over an index in step
// it writes nothing (every entry keeps its revision; on etcd a delete and
// put of one key in a transaction would bump it), which is what lets it
// run in one etcd transaction however many jobs there are.
func TestReindexLeavesAnIndexInStepAlone(t *testing.T) {
	t.Parallel()
	for name, e := range map[string]*loopEnv{
		"bolt": newLoopEnv(t, scheduler.Config{}),
		"etcd": newLoopEnvOn(t, sharedEtcd.Get(t).Open(t), scheduler.Config{}),
	} {
		for i := range 3 {
			e.add(everyMinute(fmt.Sprintf("job-%d", i)))
		}
		revisions := func() map[string]int64 {
			out := map[string]int64{}
			require.NoError(t, e.st.View(t.Context(), func(tx store.ReadTx) error {
				return tx.Scan("cron/due/", store.ScanOptions{}, func(it store.Item) bool {
					out[it.Key] = it.Revision
					return true
				})
			}))
			return out
		}
		before := revisions()
		require.Len(t, before, 3, name)
		require.NoError(t, e.sched.Reindex(), name)
		require.Equal(t, before, revisions(), name)
	}
}
