package engine_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/sdk"
)

// A key seen before returns the flow its first call made, however many
// callers race on it: one flow, and its record, in one transaction.
func TestCreateFlowOnceMakesOneFlowPerKey(t *testing.T) {
	eng := newEngine(t)
	in := engine.CreateFlowInput{OwnerKey: "trigger:x", ControllerID: "ctl", Goal: "g"}
	const n = 8
	ids := make([]string, n)
	made := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, created, err := eng.CreateFlowOnce(engine.TriggerRecords, "trigger/seen/x/d1", in, func(tx engine.RecordTx, f *sdk.Flow) error {
				return tx.Put("trigger/run/x/"+f.ID, []byte(f.ID))
			})
			require.NoError(t, err)
			ids[i], made[i] = f.ID, created
		}()
	}
	wg.Wait()
	created := 0
	for i := range n {
		require.Equal(t, ids[0], ids[i], "every caller got the first flow")
		if made[i] {
			created++
		}
	}
	require.Equal(t, 1, created, "exactly one call created the flow")
	require.Len(t, allFlows(t, eng), 1)

	other, created2, err := eng.CreateFlowOnce(engine.TriggerRecords, "trigger/seen/x/d2", in, nil)
	require.NoError(t, err)
	require.True(t, created2)
	require.NotEqual(t, ids[0], other.ID, "another key makes another flow")

	_, _, err = eng.CreateFlowOnce(engine.TriggerRecords, "cron/x", in, nil)
	require.ErrorContains(t, err, "outside the record namespace", "a key outside the namespace is refused")
}

// Two gateways sharing one etcd store race on one delivery key: the read
// of the absent key is compared at commit, so one flow is made between
// them and both answer with it.
func TestCreateFlowOnceAcrossGatewaysOnEtcd(t *testing.T) {
	if etcdServer == nil {
		t.Skip("needs two engines on one shared store; runs in the etcd pass")
	}
	prefix := etcdServer.Prefix()
	engines := make([]*engine.Engine, 2)
	for i := range engines {
		st, err := etcd.New(etcdServer.Client(), etcd.Options{Prefix: prefix})
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		engines[i], err = engine.New(st, engine.Config{})
		require.NoError(t, err)
	}
	in := engine.CreateFlowInput{OwnerKey: "trigger:x", ControllerID: "ctl", Goal: "g"}
	const n = 6
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, _, err := engines[i%2].CreateFlowOnce(engine.TriggerRecords, "trigger/seen/x/d1", in, nil)
			require.NoError(t, err)
			ids[i] = f.ID
		}()
	}
	wg.Wait()
	for i := range n {
		require.Equal(t, ids[0], ids[i], "every gateway answered with the one flow")
	}
	require.Len(t, allFlows(t, engines[0]), 1)
}
