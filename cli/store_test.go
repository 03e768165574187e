package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
	"github.com/flowgate/flowgate/host/store/migrate"
)

// sharedEtcd is the package's embedded etcd, started by the first test
// that needs one; TestMain stops it.
var sharedEtcd etcdtest.Lazy

func TestStoreMigrateBoltToEtcdAndBack(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	dir := t.TempDir()
	var flowID string
	seed(t, dir, func(eng *engine.Engine) {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "move me"})
		require.NoError(t, err)
		step := "two"
		_, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{CurrentStep: &step})
		require.NoError(t, err)
		flowID = f.ID
	})
	bolt := "bolt://" + filepath.Join(dir, home.DBFile)
	etcdURL := "etcd://" + srv.Endpoint() + srv.Prefix()

	code, out, errOut := run(t, dir, "store", "migrate", "--from", bolt, "--to", etcdURL, "--json")
	require.Equal(t, 0, code, errOut)
	var rep migrate.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, int64(2), rep.MaxRevision, "the flow is at revision 2")

	code, _, errOut = run(t, dir, "store", "migrate", "--from", bolt, "--to", etcdURL)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "the target store is not empty")

	back := "bolt://" + filepath.Join(t.TempDir(), "back.db")
	code, out, errOut = run(t, dir, "store", "migrate", "--from", etcdURL, "--to", back)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Copied ")
	require.Contains(t, out, "the copy is verified")

	code, out, errOut = run(t, dir, "tasks", "flow", "show", flowID, "--json", "--store", etcdURL)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"revision": 2`)
}

func TestStoreMigrateRefusesBadURLs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "bolt:///x.db"}, "needs both --from and --to"},
		{[]string{"--from", "/x.db", "--to", "etcd://h:2379/p"}, "write bolt:///path/to/flowgate.db for a bbolt file"},
		{[]string{"--from", "bolt:///x.db", "--to", "etcd://h:2379"}, "names no key prefix"},
		{[]string{"--from", "bolt:///x.db", "--to", "bolt:///y.db", "--user", "root"}, "are for an etcd:// store"},
	} {
		code, _, errOut := run(t, dir, append([]string{"store", "migrate"}, tt.args...)...)
		require.Equal(t, 2, code, tt.args)
		require.Contains(t, errOut, tt.want)
	}
}

// TestCommandsOnEtcd: with --store, commands open the etcd store
// directly: one records a flow, another lists it, tasks run hosts its
// gateway on etcd, and a read-only command refuses to write.
func TestCommandsOnEtcd(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	dir := t.TempDir()
	url := "etcd://" + srv.Endpoint() + srv.Prefix()

	code, out, errOut := run(t, dir, "--store", url, "tasks", "flow", "create", "--controller", "ctl", "--goal", "on etcd", "--owner", "me", "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"revision": 1`)
	code, out, errOut = run(t, dir, "tasks", "flow", "list", "--store", url)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "on etcd")
	code, out, errOut = run(t, dir, "tasks", "flow", "list")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "on etcd", "the home's own store holds nothing of it")

	code, out, errOut = run(t, dir, "--store", url, "tasks", "run", "--", "sh", "-c", "echo from etcd")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "from etcd\n", out)
	code, out, errOut = run(t, dir, "--store", url, "tasks", "list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "succeeded")
}

func TestStoreFlagRefusesBadURLs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for url, want := range map[string]string{
		"etcd://h:2379":     "names no key prefix",
		"/var/flowgate.db":  "write bolt:///path/to/flowgate.db",
		"etcd://h:x/prefix": "has no numeric port",
	} {
		code, _, errOut := run(t, dir, "tasks", "flow", "list", "--store", url)
		require.Equal(t, 2, code, url)
		require.Contains(t, errOut, "--store: ")
		require.Contains(t, errOut, want)
	}
}

// TestRunWorkRefusedWhileAGatewayHoldsTheStore: a command that runs work
// hosts a gateway, which a gateway holding the etcd store elsewhere
// refuses; the error says where to run it.
func TestRunWorkRefusedWhileAGatewayHoldsTheStore(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	url := "etcd://" + srv.Endpoint() + srv.Prefix()
	g, err := gateway.New(gateway.Config{Home: t.TempDir(), Store: backend.Spec{URL: url}})
	require.NoError(t, err)
	require.NoError(t, g.Start(context.Background()))
	t.Cleanup(func() { g.Stop(context.Background()) })

	code, _, errOut := run(t, t.TempDir(), "--store", url, "tasks", "run", "--", "true")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "is held by flowgate gateway (pid ")
	require.Contains(t, errOut, "run the command on that gateway's machine")
}

// backup and check work on the home's bbolt file: with --store they
// refuse, saying what to use instead, rather than copy the wrong store.
func TestBackupAndCheckRefuseStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"backup", filepath.Join(dir, "copy.db")}, {"check"}} {
		code, _, errOut := run(t, dir, append([]string{"--store", "etcd://h:2379/p"}, args...)...)
		require.Equal(t, 2, code, args)
		require.Contains(t, errOut, "takes no --store")
		require.Contains(t, errOut, "etcdctl snapshot save")
		require.NoFileExists(t, filepath.Join(dir, "copy.db"))
	}
}
