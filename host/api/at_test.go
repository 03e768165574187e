package api_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
)

// sharedEtcd is the package's embedded etcd, started by the first test
// that needs one; TestMain stops it.
var sharedEtcd etcdtest.Lazy

// TestLocalAtEtcd: a client over an etcd store writes there, and a
// reader over it reads what was written and refuses to write.
func TestLocalAtEtcd(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	spec := backend.Spec{URL: "etcd://" + srv.Endpoint() + srv.Prefix()}
	ctx := context.Background()

	w, err := api.OpenLocalAt(spec, t.TempDir(), "test")
	require.NoError(t, err)
	f, err := w.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	r, err := api.OpenLocalReaderAt(spec, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	v, err := r.ViewFlow(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, f.Revision, v.Flow.Revision)
	_, err = r.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o2", ControllerID: "c", Goal: "g"})
	require.ErrorIs(t, err, store.ErrReadOnly)
}
