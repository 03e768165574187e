package gateway

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store/backend"
)

// The store a home's gateway serves is what commands on the home open:
// the recorded one wins over gateway.yaml, carries no password, and a
// gateway on the home's bbolt file takes the record away again.
func TestHomeStoreIsTheOneItsGatewayServes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec, err := HomeStore(dir)
	require.NoError(t, err)
	require.Empty(t, spec.URL, "a bare home: its bbolt file")

	require.NoError(t, os.WriteFile(filepath.Join(dir, ConfigFile), []byte("store: etcd://127.0.0.1:2379/from-config\n"), 0o600))
	spec, err = HomeStore(dir)
	require.NoError(t, err)
	require.Equal(t, "etcd://127.0.0.1:2379/from-config", spec.URL, "with no record, the home's gateway.yaml")

	served := backend.Spec{URL: "etcd://127.0.0.1:2379/served", CACert: "/ca.pem", User: "flowgate:secret"}
	require.NoError(t, recordStore(dir, served))
	b, err := os.ReadFile(filepath.Join(dir, home.StoreFile))
	require.NoError(t, err)
	require.NotContains(t, string(b), "secret", "the password is never written")
	spec, err = HomeStore(dir)
	require.NoError(t, err)
	require.Equal(t, backend.Spec{URL: served.URL, CACert: "/ca.pem", User: "flowgate"}, spec)

	require.NoError(t, recordStore(dir, backend.Spec{}))
	require.NoFileExists(t, filepath.Join(dir, home.StoreFile))
	spec, err = HomeStore(dir)
	require.NoError(t, err)
	require.Equal(t, "etcd://127.0.0.1:2379/from-config", spec.URL)

	require.NoError(t, os.WriteFile(filepath.Join(dir, home.StoreFile), []byte("url: mysql://nowhere\n"), 0o600))
	_, err = HomeStore(dir)
	require.ErrorContains(t, err, home.StoreFile)
}
