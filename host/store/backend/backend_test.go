package backend_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/backend"
)

func TestSpecRefusesBadURLs(t *testing.T) {
	t.Parallel()
	for spec, want := range map[backend.Spec]string{
		{URL: "/var/flowgate.db"}:                    "write bolt:///path/to/flowgate.db for a bbolt file or etcd://",
		{URL: "bolt://"}:                             "names no file",
		{URL: "bolt:///x.db", User: "root"}:          "are for an etcd:// store",
		{URL: "etcd://h:2379"}:                       "names no key prefix",
		{URL: "etcd://h:2379/p", Cert: "client.pem"}: "",
	} {
		err := spec.Validate()
		if want == "" {
			require.NoError(t, err, spec.URL)
			continue
		}
		require.ErrorContains(t, err, want, spec.URL)
	}
	require.True(t, backend.Spec{URL: "etcd://h/p"}.IsEtcd())
	require.False(t, backend.Spec{URL: "bolt:///p"}.IsEtcd())
}

func TestOpenBolt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	_, err := backend.OpenReadOnly(backend.Spec{URL: "bolt://" + path})
	require.Error(t, err, "reading opens no file that is not there")
	st, err := backend.Open(backend.Spec{URL: "bolt://" + path}, store.Options{})
	require.NoError(t, err)
	require.IsType(t, &store.Bolt{}, st)
	require.NoError(t, st.Close())
	ro, err := backend.OpenReadOnly(backend.Spec{URL: "bolt://" + path})
	require.NoError(t, err)
	require.NoError(t, ro.Close())
}
