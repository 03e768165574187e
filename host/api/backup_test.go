package api_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// storeGateway is a real store, engine and Local served on a real socket,
// with the store kept at hand for fault injection.
type storeGateway struct {
	st     *store.Bolt
	eng    *engine.Engine
	remote *api.Remote
}

func newStoreGateway(t *testing.T) storeGateway {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{})
	require.NoError(t, err)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	local := api.NewLocal(st, eng, dir, nil)
	t.Cleanup(func() { local.Close() })
	sock, _ := serve(t, api.NewHandler(local, hclog.NewNullLogger()))
	remote, err := api.DialRemote(sock)
	require.NoError(t, err)
	t.Cleanup(func() { remote.Close() })
	return storeGateway{st: st, eng: eng, remote: remote}
}

func TestBackupOverTheSocket(t *testing.T) {
	t.Parallel()
	g := newStoreGateway(t)
	f, err := g.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "me", ControllerID: "ctl", Goal: "backed up"})
	require.NoError(t, err)

	path := filepath.Join(t.TempDir(), "backup.db")
	res, err := api.BackupFile(context.Background(), g.remote, path, store.BackupOptions{Live: g.st.Path()})
	require.NoError(t, err)
	require.Equal(t, path, res.Path)
	require.Equal(t, 1, res.Records["flow"])
	require.Positive(t, res.Revision)

	var direct bytes.Buffer
	_, err = g.st.WriteTo(&direct)
	require.NoError(t, err)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, int64(direct.Len()), res.Size)
	require.Equal(t, len(direct.Bytes()), len(got))

	b, err := store.OpenReadOnly(path, store.Options{})
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, b.View(t.Context(), func(tx store.ReadTx) error {
		_, err := tx.Get("flow/" + f.ID)
		return err
	}))
}

func TestBackupStreamThatBreaksOffIsAnError(t *testing.T) {
	t.Parallel()
	fake := &backupFake{backup: func(_ context.Context, w io.Writer) (int64, error) {
		n, _ := w.Write(bytes.Repeat([]byte{1}, 4096))
		return int64(n), errors.New("disk read failed")
	}}
	sock, _ := serve(t, api.NewHandler(fake, hclog.NewNullLogger()))
	remote, err := api.DialRemote(sock)
	require.NoError(t, err)
	defer remote.Close()
	_, err = remote.Backup(context.Background(), io.Discard)
	require.ErrorContains(t, err, "broke off")

	dir := t.TempDir()
	_, err = api.BackupFile(context.Background(), remote, filepath.Join(dir, "backup.db"), store.BackupOptions{})
	require.Error(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "no partial file")

	fake.backup = func(context.Context, io.Writer) (int64, error) { return 0, store.ErrClosed }
	_, err = remote.Backup(context.Background(), io.Discard)
	require.ErrorContains(t, err, store.ErrClosed.Error(), "an error before the first byte comes back as it is")

	r := do(t, sock, http.MethodGet, "/v1/backup?x=1", "")
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Equal(t, "invalid", errorOf(t, r).Error.Code)
}

// backupFake is a fakeClient whose Backup is the function set on it.
type backupFake struct {
	fakeClient
	backup func(ctx context.Context, w io.Writer) (int64, error)
}

func (f *backupFake) Backup(ctx context.Context, w io.Writer) (int64, error) { return f.backup(ctx, w) }

func TestCheckOverTheSocket(t *testing.T) {
	t.Parallel()
	g := newStoreGateway(t)
	f, err := g.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "me", ControllerID: "ctl", Goal: "checked"})
	require.NoError(t, err)

	rep, err := g.remote.Check(context.Background())
	require.NoError(t, err)
	require.True(t, rep.Clean(), "%+v", rep)
	require.Equal(t, g.st.Path(), rep.Path)
	require.NotNil(t, rep.Problems)

	orphan := "idx/flow/status/running/gone"
	missing := "idx/flow/owner/me/" + f.ID
	require.NoError(t, g.st.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Put(orphan, nil); err != nil {
			return err
		}
		return tx.Delete(missing)
	}))
	rep, err = g.remote.Check(context.Background())
	require.NoError(t, err)
	require.False(t, rep.Clean())
	require.True(t, rep.IndexesChecked)
	require.Equal(t, 2, rep.Repairable())
	kinds := map[string]string{}
	for _, p := range rep.Problems {
		kinds[p.Key] = p.Kind
		require.Equal(t, api.RepairMaintenance, p.Repair)
	}
	require.Equal(t, map[string]string{orphan: engine.IndexOrphan, missing: engine.IndexMissing}, kinds)
}
