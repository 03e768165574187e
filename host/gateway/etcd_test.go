package gateway_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// sharedEtcd is the package's embedded etcd, started by the first test
// that needs one; TestMain stops it.
var sharedEtcd etcdtest.Lazy

// etcdGateway is an unstarted gateway on a fresh home whose records are
// in the etcd store url, given as the config file's store section, with
// what edit (if any) sets in its config file.
func etcdGateway(t *testing.T, url string, edit ...func(*gateway.FileConfig)) (*gateway.Gateway, string) {
	t.Helper()
	home, err := os.MkdirTemp("", "fgetcd") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	var fc gateway.FileConfig
	fc.Store.URL = url
	for _, e := range edit {
		e(&fc)
	}
	g, err := gateway.New(gateway.Config{Home: home, File: fc, Launch: testLaunch, Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	return g, home
}

// TestGatewayOnEtcd runs a task through a gateway whose records are in
// etcd. A second gateway on the prefix joins it; a Solo one (a command's
// gateway) is refused, naming a gateway that serves the installation,
// until none does.
func TestGatewayOnEtcd(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	url := "etcd://" + srv.Endpoint() + srv.Prefix()
	ctx := context.Background()

	first, home := etcdGateway(t, url)
	require.NoError(t, first.Start(ctx))
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	task, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "on-etcd", Spec: sdk.TaskSpec{Shell: "echo hi"}})
	require.NoError(t, err)
	polltest.Until(t, "the task to succeed", func() bool {
		got, err := c.ResolveTask(ctx, task.ID)
		return err == nil && got.Status == sdk.TaskSucceeded
	})
	st, err := c.Status(ctx)
	require.NoError(t, err)
	require.True(t, st.Store.Writable)
	require.NotZero(t, st.Store.Attempts, "the status reports etcd's commits")

	// The records are in etcd, under the prefix.
	direct, err := backend.Open(backend.Spec{URL: url}, store.Options{})
	require.NoError(t, err)
	eng, err := engine.New(direct, engine.Config{})
	require.NoError(t, err)
	got, err := eng.ResolveTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	require.NoError(t, direct.Close())

	// A command elsewhere (--store) queues a task straight into etcd: the
	// gateway's runner finds it on its next scan and runs it.
	other, err := api.OpenLocalAt(backend.Spec{URL: url}, t.TempDir(), "another machine")
	require.NoError(t, err)
	queued, _, err := other.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "from-elsewhere", Spec: sdk.TaskSpec{Shell: "echo there"}})
	require.NoError(t, err)
	require.NoError(t, other.Close())
	polltest.Until(t, "the gateway to run a task queued by another process", func() bool {
		got, err := c.ResolveTask(ctx, queued.ID)
		return err == nil && got.Status == sdk.TaskSucceeded
	})

	second, _ := etcdGateway(t, url)
	require.NoError(t, second.Start(ctx), "several gateways serve one installation")
	require.NoError(t, second.Stop(ctx))

	soloHome, err := os.MkdirTemp("", "fgetcd")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(soloHome) })
	solo, err := gateway.New(gateway.Config{Home: soloHome, Launch: testLaunch, Store: backend.Spec{URL: url}, Solo: true})
	require.NoError(t, err)
	err = solo.Start(ctx)
	require.ErrorIs(t, err, gateway.ErrAlreadyRunning)
	require.ErrorIs(t, err, etcd.ErrHeld)
	require.ErrorContains(t, err, fmt.Sprintf("(pid %d on ", os.Getpid()))
	require.ErrorContains(t, err, home)

	require.NoError(t, first.Stop(ctx))
	require.NoError(t, solo.Start(ctx), "a gateway that stops leaves the installation at once")
	require.NoError(t, solo.Stop(ctx))
}

func TestGatewayRefusesABadStoreURL(t *testing.T) {
	t.Parallel()
	var fc gateway.FileConfig
	fc.Store.URL = "etcd://10.0.0.1:2379"
	_, err := gateway.New(gateway.Config{Home: t.TempDir(), File: fc})
	require.ErrorContains(t, err, "store: store URL \"etcd://10.0.0.1:2379\" names no key prefix")
	_, err = gateway.New(gateway.Config{Home: t.TempDir(), Store: backend.Spec{URL: "mysql://x"}})
	require.ErrorContains(t, err, "write bolt:///path/to/flowgate.db for a bbolt file or etcd://")
}

// TestConfigStoreSection reads the store section as a URL alone and as a
// map with etcdctl's connection settings.
func TestConfigStoreSection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for yaml, want := range map[string]gateway.StoreConfig{
		"store: etcd://h1:2379,h2:2379/flowgate\n": {URL: "etcd://h1:2379,h2:2379/flowgate"},
		"store:\n  url: etcd://h:2379/f\n  cacert: ca.pem\n  cert: me.pem\n  key: me-key.pem\n  user: flowgate\n": {
			URL: "etcd://h:2379/f", CACert: "ca.pem", Cert: "me.pem", Key: "me-key.pem", User: "flowgate"},
		"limits:\n  max_running: 2\n": {},
	} {
		path := filepath.Join(dir, "gateway.yaml")
		require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
		fc, err := gateway.LoadConfig(path)
		require.NoError(t, err, yaml)
		require.Equal(t, want, fc.Store, yaml)
	}
	path := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte("store:\n  url: etcd://h:2379/f\n  password: x\n"), 0o600))
	_, err := gateway.LoadConfig(path)
	require.ErrorContains(t, err, "password")
	require.NoError(t, os.WriteFile(path, []byte("store: etcd://h:2379\n"), 0o600))
	_, err = gateway.LoadConfig(path)
	require.ErrorContains(t, err, "names no key prefix")
}

// TestGatewayRejoinsWhenItLosesItsMembership: when the gateway's lease
// on the etcd installation ends while it runs (here revoked), it logs an
// error that says the other gateways take its work, stops its parts, and
// joins again by itself under a new member id: it reattaches to its
// running task, whose record then names the new id (so that the others
// leave it alone), follows it to its end, and runs a task queued
// afterwards. Before, it stayed out of the installation until restarted
// by hand, taking no work while its process stayed up.
func TestGatewayRejoinsWhenItLosesItsMembership(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	home, err := os.MkdirTemp("", "fgetcd")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	logPath := filepath.Join(t.TempDir(), "gateway.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	t.Cleanup(func() { logFile.Close() })
	logs := func() string {
		b, _ := os.ReadFile(logPath)
		return string(b)
	}
	url := "etcd://" + srv.Endpoint() + prefix
	g, err := gateway.New(gateway.Config{Home: home, Launch: testLaunch, Store: backend.Spec{URL: url}, Poll: 20 * time.Millisecond,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: logFile})})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { g.Stop(ctx) })
	direct, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	eng, err := engine.New(direct, engine.Config{})
	require.NoError(t, err)

	goOn := filepath.Join(t.TempDir(), "go-on")
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "across-the-rejoin",
		Spec: sdk.TaskSpec{Shell: "while [ ! -e " + goOn + " ]; do sleep 0.05; done"}})
	require.NoError(t, err)
	polltest.Until(t, "the task to run", func() bool {
		got, err := eng.GetTask(task.ID)
		return err == nil && got.Status == sdk.TaskRunning
	})
	members, err := direct.Members(ctx)
	require.NoError(t, err)
	require.Len(t, members, 1)
	old := members[0]
	_, err = srv.Client().Revoke(ctx, clientv3.LeaseID(old.Lease))
	require.NoError(t, err)
	polltest.Until(t, "the gateway to join again", func() bool {
		return strings.Contains(logs(), "joined the etcd installation again")
	}, polltest.Explain(logs))
	require.Contains(t, logs(), "lost the membership of the etcd installation (its lease ended); the other gateways now take its event streams and its tasks")
	members, err = direct.Members(ctx)
	require.NoError(t, err)
	require.Len(t, members, 1)
	require.NotEqual(t, old.ID, members[0].ID, "a gateway joins again under a new member id")
	require.Equal(t, old.PID, members[0].PID)
	got, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status)
	require.Equal(t, members[0].ID, got.Gateway, "the gateway took its running task over under its new id")
	require.Equal(t, 1, got.Attempts)

	require.NoError(t, os.WriteFile(goOn, nil, 0o600))
	next, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "after-the-rejoin", Spec: sdk.TaskSpec{Shell: "echo next"}})
	require.NoError(t, err)
	polltest.Until(t, "both tasks to succeed", func() bool {
		a, aerr := eng.GetTask(task.ID)
		b, berr := eng.GetTask(next.ID)
		return aerr == nil && berr == nil && a.Status == sdk.TaskSucceeded && b.Status == sdk.TaskSucceeded
	})
	require.DirExists(t, runner.LogDir(home, next.ID, 1))
}

// TestGatewayJoinsAsMemberAndDrains: a gateway on etcd registers as a
// member with its host, pid, socket, the config's labels and lease TTL,
// and its load; drained, it reports so and starts no queued task, which
// the next gateway runs once the drained one stops.
func TestGatewayJoinsAsMemberAndDrains(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	url := "etcd://" + srv.Endpoint() + prefix
	ctx := context.Background()
	start := func() (*gateway.Gateway, string) {
		home, err := os.MkdirTemp("", "fgetcd")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(home) })
		var fc gateway.FileConfig
		fc.Store.URL = url
		fc.Cluster.Labels = []string{"gpu", "zone=eu"}
		fc.Cluster.LeaseTTL = gateway.Duration(3 * time.Second)
		g, err := gateway.New(gateway.Config{Home: home, File: fc, Launch: testLaunch, Poll: 20 * time.Millisecond})
		require.NoError(t, err)
		require.NoError(t, g.Start(ctx))
		t.Cleanup(func() { g.Stop(ctx) })
		return g, home
	}
	first, home := start()
	direct, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	members, err := direct.Members(ctx)
	require.NoError(t, err)
	require.Len(t, members, 1)
	m := members[0]
	host, _ := os.Hostname()
	require.Regexp(t, fmt.Sprintf(`^%s\.%d(-\d+)?$`, regexp.QuoteMeta(host), os.Getpid()), m.ID)
	require.Equal(t, os.Getpid(), m.PID)
	require.Equal(t, gateway.SocketPath(home), m.Address)
	require.Equal(t, []string{"gpu", "zone=eu"}, m.Labels)
	require.Equal(t, 3, m.TTL)
	polltest.Until(t, "a heartbeat with the runner's cap", func() bool {
		ms, err := direct.Members(ctx)
		return err == nil && len(ms) == 1 && ms[0].Load.MaxRunning == 8
	})

	polltest.Until(t, "the gateway to lead cron", func() bool {
		id, err := direct.Leader(ctx, gateway.CronRole)
		return err == nil && id == m.ID
	})

	require.NoError(t, direct.Drain(ctx, m.ID))
	var beat time.Time
	polltest.Until(t, "the member to report it is drained", func() bool {
		ms, err := direct.Members(ctx)
		if err != nil || len(ms) != 1 || !ms[0].Load.Drained {
			return false
		}
		beat = ms[0].Heartbeat
		return true
	})
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	task, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "drained", Spec: sdk.TaskSpec{Shell: "echo later"}})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	polltest.Until(t, "two more heartbeats", func() bool {
		ms, err := direct.Members(ctx)
		return err == nil && len(ms) == 1 && ms[0].Heartbeat.After(beat.Add(time.Second))
	})
	eng, err := engine.New(direct, engine.Config{})
	require.NoError(t, err)
	got, err := eng.ResolveTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, got.Status, "a drained gateway started a task")

	require.NoError(t, first.Stop(ctx))
	members, err = direct.Members(ctx)
	require.NoError(t, err)
	require.Empty(t, members, "a gateway that stops leaves at once")
	start()
	members, err = direct.Members(ctx)
	require.NoError(t, err)
	require.Len(t, members, 1)
	polltest.Until(t, "the next gateway to run the task", func() bool {
		got, err = eng.ResolveTask(task.ID)
		return err == nil && got.Status == sdk.TaskSucceeded
	})
	require.Equal(t, members[0].ID, got.Gateway, "the task names the gateway that ran it")
}

// TestConfigClusterSection reads labels and the lease TTL, and refuses a
// TTL that is not whole seconds of at least 2s and a label with a space.
func TestConfigClusterSection(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(path, []byte("cluster:\n  labels: [gpu, zone=eu]\n  lease_ttl: 5s\n"), 0o600))
	fc, err := gateway.LoadConfig(path)
	require.NoError(t, err)
	require.Equal(t, []string{"gpu", "zone=eu"}, fc.Cluster.Labels)
	require.Equal(t, gateway.Duration(5*time.Second), fc.Cluster.LeaseTTL)
	for yaml, want := range map[string]string{
		"cluster:\n  lease_ttl: 1500ms\n": "cluster.lease_ttl must be whole seconds, at least 2s",
		"cluster:\n  lease_ttl: 1s\n":     "cluster.lease_ttl must be whole seconds, at least 2s",
		"cluster:\n  labels: [\"a b\"]\n": "cluster.labels[0] is \"a b\"",
	} {
		require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
		_, err := gateway.LoadConfig(path)
		require.ErrorContains(t, err, want, yaml)
	}
}

// TestGatewayTakesOverTasksOfAGoneGateway: at its start a gateway leaves
// alone the running tasks of a member on another machine, and marks lost
// those of a gateway on another machine that is no longer a member,
// naming it, or queues them again (and runs them) when their policy says
// they are safe to repeat. Before, it took them for its own attempts
// whose shim never started and queued every one again.
func TestGatewayTakesOverTasksOfAGoneGateway(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	ctx := context.Background()
	direct, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	eng, err := engine.New(direct, engine.Config{})
	require.NoError(t, err)
	running := func(gateway string, retry *sdk.RetryPolicy) string {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "ran-on-" + gateway, Spec: sdk.TaskSpec{Shell: "echo again", Retry: retry}})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{Gateway: gateway})
		require.NoError(t, err)
		return task.ID
	}
	alive, err := direct.Join(ctx, etcd.MemberInfo{ID: "far-host.1000", Host: "far-host", PID: 1000}, 5, nil)
	require.NoError(t, err)
	t.Cleanup(func() { alive.Leave(context.Background()) })
	kept := running("far-host.1000", nil)
	lost := running("far-host.999", nil)
	again := running("far-host.998", &sdk.RetryPolicy{MaxAttempts: 2, SafeToRepeat: true})

	home, err := os.MkdirTemp("", "fgetcd")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	g, err := gateway.New(gateway.Config{Home: home, Launch: testLaunch, Poll: 20 * time.Millisecond, Store: backend.Spec{URL: "etcd://" + srv.Endpoint() + prefix}})
	require.NoError(t, err)
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { g.Stop(ctx) })

	got, err := eng.GetTask(lost)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskLost, got.Status)
	require.Contains(t, got.Errors[len(got.Errors)-1], "gateway far-host.999, which ran it on another machine, left the installation")
	got, err = eng.GetTask(kept)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status, "a live member's task was touched")
	polltest.Until(t, "the safe task to run again here", func() bool {
		got, err = eng.GetTask(again)
		return err == nil && got.Status == sdk.TaskSucceeded
	})
	require.Equal(t, 2, got.Attempts)
	require.NotEqual(t, "far-host.998", got.Gateway)
}

// TestRunningGatewayTakesOverTasksOfAGatewayThatDies: a running gateway
// leaves alone the tasks of a live gateway on the same machine with
// another home (before, it took them for its own and queued them again),
// and once that gateway's lease ends it marks them lost, naming it, or
// queues them again and runs them when they are safe to repeat, while
// it runs (before, only a gateway starting afterwards did).
func TestRunningGatewayTakesOverTasksOfAGatewayThatDies(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	ctx := context.Background()
	direct, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	eng, err := engine.New(direct, engine.Config{})
	require.NoError(t, err)
	host, _ := os.Hostname()
	other, err := direct.Join(ctx, etcd.MemberInfo{ID: host + ".999999", Host: host, PID: 999999, Home: "/var/lib/other-home"}, 5, nil)
	require.NoError(t, err)
	started := func(key string, retry *sdk.RetryPolicy) string {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: key, Spec: sdk.TaskSpec{Shell: "echo again", Retry: retry}})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{Gateway: other.ID()})
		require.NoError(t, err)
		return task.ID
	}
	lost := started("lost", nil)
	again := started("again", &sdk.RetryPolicy{MaxAttempts: 2, SafeToRepeat: true, Backoff: sdk.Duration(10 * time.Millisecond)})

	home, err := os.MkdirTemp("", "fgetcd")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	var fc gateway.FileConfig
	fc.Store.URL = "etcd://" + srv.Endpoint() + prefix
	fc.Cluster.LeaseTTL = gateway.Duration(2 * time.Second)
	g, err := gateway.New(gateway.Config{Home: home, File: fc, Launch: testLaunch, Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { g.Stop(ctx) })
	for _, id := range []string{lost, again} {
		got, err := eng.GetTask(id)
		require.NoError(t, err)
		require.Equal(t, sdk.TaskRunning, got.Status, "the task of a live gateway with another home was touched: %q", got.Errors)
		require.Equal(t, 1, got.Attempts)
	}

	srv.EndLease(t, direct, other.ID())
	var got *stored.Task
	polltest.Until(t, "the dead gateway's task to be marked lost", func() bool {
		got, err = eng.GetTask(lost)
		return err == nil && got.Status == sdk.TaskLost
	})
	require.Contains(t, got.Errors[len(got.Errors)-1], "gateway "+other.ID()+", which ran it, left the installation (taken over by gateway "+host+".")
	polltest.Until(t, "the dead gateway's safe task to run again here", func() bool {
		got, err = eng.GetTask(again)
		return err == nil && got.Status == sdk.TaskSucceeded
	})
	require.Equal(t, 2, got.Attempts)
	require.NotEqual(t, other.ID(), got.Gateway)
}

// TestGatewayLeavesTasksOfAnotherHomeOnThisMachine: a gateway starting
// beside the running task of a gone gateway of this machine that ran from
// another home (its attempt has no files in this home) marks it lost,
// naming that gateway. Before, it took the task for its own earlier
// run's attempt whose shim never started and ran it again.
func TestGatewayLeavesTasksOfAnotherHomeOnThisMachine(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	direct, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	eng, err := engine.New(direct, engine.Config{})
	require.NoError(t, err)
	host, _ := os.Hostname()
	gone := host + ".999998"
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "other-home", Spec: sdk.TaskSpec{Shell: "echo twice"}})
	require.NoError(t, err)
	_, err = eng.StartTask(task.ID, engine.StartInput{Gateway: gone})
	require.NoError(t, err)

	g, _ := etcdGateway(t, "etcd://"+srv.Endpoint()+prefix)
	ctx := context.Background()
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { g.Stop(ctx) })
	got, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskLost, got.Status, "errors: %q", got.Errors)
	require.Equal(t, 1, got.Attempts)
	require.Contains(t, got.Errors[len(got.Errors)-1], "gateway "+gone+", which ran it, left the installation, and this gateway's home has no files of its attempt")
}
