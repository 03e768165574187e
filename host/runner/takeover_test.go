package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// survivor starts what of a gateway on the etcd installation at prefix
// takes over the tasks of gateways that leave: a store client of its own,
// a member named id, an engine and a runner wired as host/gateway wires
// them, its runner hearing of departures only when watch is set.
func survivor(t *testing.T, prefix, id string, sweep time.Duration, watch bool) {
	t.Helper()
	ctx := context.Background()
	st, err := etcd.New(sharedEtcd.Get(t).Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	m, err := st.Join(ctx, etcd.MemberInfo{ID: id, Host: "host-" + id, PID: 1}, 5, nil)
	require.NoError(t, err)
	watchCtx, stopWatch := context.WithCancel(ctx)
	t.Cleanup(stopWatch)
	roster, err := st.WatchMembers(watchCtx, nil)
	require.NoError(t, err)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	cfg := runner.Config{Home: t.TempDir(), Launch: launchShim, Poll: 20 * time.Millisecond, Member: id, Sweep: sweep,
		Cluster: func(gateway string) (bool, bool) {
			rec, err := st.Member(ctx, gateway)
			return gateway == id, err != nil || rec != nil
		},
		Departures: roster.Departures,
	}
	if !watch {
		cfg.Departures = func(ctx context.Context) <-chan string {
			never := make(chan string)
			go func() { <-ctx.Done(); close(never) }()
			return never
		}
	}
	r, err := runner.New(eng, cfg)
	require.NoError(t, err)
	eng.Listen("runner", r)
	require.NoError(t, r.Start(ctx))
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(ctx, waitLimit)
		defer cancel()
		require.NoError(t, r.Stop(stop))
		m.Leave(context.Background())
		st.Close()
	})
}

// TestSurvivorsTakeOverTheTasksOfAGatewayThatDies: two gateways run while
// a third, on another machine, dies with tasks running (its lease is
// revoked). Both survivors notice, by the members watch or else by their
// sweep; each task is settled once: marked lost naming the dead gateway,
// or queued again and run when its policy says it is safe to repeat,
// unless someone asked to stop it. A live member's task is left alone.
// Before, only a gateway starting afterwards did this.
func TestSurvivorsTakeOverTheTasksOfAGatewayThatDies(t *testing.T) {
	for name, tc := range map[string]struct {
		sweep time.Duration
		watch bool
	}{
		"by the watch": {sweep: time.Hour, watch: true},
		"by the sweep": {sweep: 100 * time.Millisecond, watch: false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := sharedEtcd.Get(t)
			prefix := srv.Prefix()
			ctx := context.Background()
			direct, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
			require.NoError(t, err)
			t.Cleanup(func() { direct.Close() })
			eng, err := engine.New(direct, engine.Config{})
			require.NoError(t, err)
			dead, err := direct.Join(ctx, etcd.MemberInfo{ID: "far-host.9", Host: "far-host", PID: 9}, 5, nil)
			require.NoError(t, err)
			alive, err := direct.Join(ctx, etcd.MemberInfo{ID: "far-host.10", Host: "far-host", PID: 10}, 5, nil)
			require.NoError(t, err)
			t.Cleanup(func() { alive.Leave(context.Background()) })
			started := func(gateway string, retry *sdk.RetryPolicy) string {
				task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: fmt.Sprintf("%s-%d", gateway, time.Now().UnixNano()),
					Spec: sdk.TaskSpec{Shell: "true", Retry: retry}})
				require.NoError(t, err)
				_, err = eng.StartTask(task.ID, engine.StartInput{Gateway: gateway})
				require.NoError(t, err)
				return task.ID
			}
			safe := &sdk.RetryPolicy{MaxAttempts: 2, SafeToRepeat: true, Backoff: sdk.Duration(10 * time.Millisecond)}
			var lost, again []string
			for range 3 {
				lost = append(lost, started("far-host.9", nil))
				again = append(again, started("far-host.9", safe))
			}
			kept := started("far-host.10", nil)
			// Asked to stop while no gateway follows it: never queued
			// again, so it is marked lost like the others.
			stopped := started("far-host.9", safe)
			_, err = eng.CancelTask(stopped)
			require.NoError(t, err)
			lost = append(lost, stopped)

			survivor(t, prefix, "node-a.1", tc.sweep, tc.watch)
			survivor(t, prefix, "node-b.2", tc.sweep, tc.watch)
			srv.EndLease(t, direct, dead.ID())

			const why = "gateway far-host.9, which ran it, left the installation (taken over by gateway node-"
			marks := func(task *stored.Task) int {
				n := 0
				for _, e := range task.Errors {
					n += strings.Count(e, why)
				}
				return n
			}
			for _, id := range lost {
				task := waitTask(t, eng, id, ended, waitLimit)
				require.Equal(t, sdk.TaskLost, task.Status)
				require.Equal(t, 1, marks(task), "marked other than once: %q", task.Errors)
				if id == stopped {
					require.Contains(t, task.Errors[0], "not re-run: a cancel was asked for")
					continue
				}
				require.Contains(t, task.Errors[0], "not re-run: its retry policy does not mark it safe_to_repeat")
			}
			for _, id := range again {
				task := waitTask(t, eng, id, ended, waitLimit)
				require.Equal(t, sdk.TaskSucceeded, task.Status, "errors: %q", task.Errors)
				require.Equal(t, 2, task.Attempts, "queued again other than once")
				require.Equal(t, 1, marks(task), "marked other than once: %q", task.Errors)
				require.Contains(t, []string{"node-a.1", "node-b.2"}, task.Gateway)
			}
			task, err := eng.GetTask(kept)
			require.NoError(t, err)
			require.Equal(t, sdk.TaskRunning, task.Status, "a live member's task was touched")
			require.Equal(t, "far-host.10", task.Gateway)
		})
	}
}
