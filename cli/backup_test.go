package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
)

// backupResult runs flowgate backup --json and decodes what it printed.
func backupResult(t *testing.T, home string, args ...string) api.BackupResult {
	t.Helper()
	code, out, errOut := run(t, home, append([]string{"backup", "--json"}, args...)...)
	require.Equal(t, 0, code, errOut)
	var res api.BackupResult
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	return res
}

// seededHome returns a fresh home whose store fn has seeded, with a
// gateway running on it if asked: started after the seeding, which needs
// the store to itself.
func seededHome(t *testing.T, withGateway bool, fn func(eng *engine.Engine)) string {
	t.Helper()
	dir := shortHome(t)
	seed(t, dir, fn)
	if withGateway {
		startGateway(t, dir)
	}
	return dir
}

// requireSoundCopy requires the store file at path to pass the whole
// check (pages and indexes), and returns the keys it holds.
func requireSoundCopy(t *testing.T, path string) map[string]bool {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, home.DBFile), data, 0o600))
	rep, err := api.CheckHome(context.Background(), dir)
	require.NoError(t, err)
	require.True(t, rep.Clean(), "%+v", rep)

	keys := map[string]bool{}
	r, err := store.OpenReadOnly(path, store.Options{})
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("", store.ScanOptions{}, func(it store.Item) bool {
			keys[it.Key] = true
			return true
		})
	}))
	return keys
}

// TestBackupWhileGatewayWrites takes a backup through a gateway while
// writers create flows through it: the copy is sound and holds every flow
// acknowledged before the backup started.
func TestBackupWhileGatewayWrites(t *testing.T) {
	t.Parallel()
	dir := shortHome(t)
	startGateway(t, dir)
	c, err := api.DialRemote(gateway.SocketPath(dir))
	require.NoError(t, err)
	defer c.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu     sync.Mutex
		acked  []string
		wg     sync.WaitGroup
		enough = make(chan struct{})
		once   sync.Once
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: fmt.Sprintf("writer-%d", w), ControllerID: "ctl", Goal: fmt.Sprint(i), AllowUnknownController: true})
				if err != nil {
					continue // cancelled at the end of the test
				}
				mu.Lock()
				acked = append(acked, f.ID)
				if len(acked) >= 40 {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(30 * time.Second):
		t.Fatal("the writers did not get 40 flows acknowledged in 30s")
	}
	mu.Lock()
	before := slices.Clone(acked)
	mu.Unlock()

	path := filepath.Join(t.TempDir(), "backup.db")
	res := backupResult(t, dir, path)
	mu.Lock()
	during := len(acked) - len(before)
	mu.Unlock()
	cancel()
	wg.Wait()
	t.Logf("%d flows acknowledged before the backup, %d during it", len(before), during)

	require.True(t, res.Gateway, "the gateway took the copy")
	require.Equal(t, path, res.Path)
	require.GreaterOrEqual(t, res.Records["flow"], len(before))
	keys := requireSoundCopy(t, path)
	for _, id := range before {
		require.True(t, keys["flow/"+id], "flow %s was acknowledged before the backup started", id)
	}
}

func TestBackupWithoutGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var ids []string
	seed(t, dir, func(eng *engine.Engine) {
		for range 3 {
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
			require.NoError(t, err)
			ids = append(ids, f.ID)
		}
	})
	live, err := os.ReadFile(filepath.Join(dir, home.DBFile))
	require.NoError(t, err)

	path := filepath.Join(t.TempDir(), "backup.db")
	code, out, errOut := run(t, dir, "backup", path)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"Backup: " + path, "bytes), read from the store file", "Revision: ", "flow 3", "Check: ok", "Took: "} {
		require.Contains(t, out, want)
	}
	keys := requireSoundCopy(t, path)
	for _, id := range ids {
		require.True(t, keys["flow/"+id])
	}
	after, err := os.ReadFile(filepath.Join(dir, home.DBFile))
	require.NoError(t, err)
	require.Equal(t, live, after, "a backup without a gateway reads the store read-only")
}

func TestBackupRefusesOverwrite(t *testing.T) {
	t.Parallel()
	for _, m := range cronHomes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := seededHome(t, m.gateway, func(*engine.Engine) {})
			path := filepath.Join(t.TempDir(), "backup.db")
			require.NoError(t, os.WriteFile(path, []byte("an older backup"), 0o600))

			code, _, errOut := run(t, dir, "backup", path)
			require.Equal(t, 1, code)
			require.Contains(t, errOut, "already exists; pass --force")
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, "an older backup", string(got))

			res := backupResult(t, dir, "--force", path)
			require.Equal(t, m.gateway, res.Gateway)
			requireSoundCopy(t, path)

			code, _, errOut = run(t, dir, "backup", "--force", filepath.Join(dir, home.DBFile))
			require.Equal(t, 1, code)
			require.Contains(t, errOut, "is the live store")
		})
	}
}

func TestBackupLeavesNoPartialFile(t *testing.T) {
	t.Parallel()
	for _, m := range cronHomes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := seededHome(t, m.gateway, func(*engine.Engine) {})
			parent := t.TempDir()
			blocker := filepath.Join(parent, "not-a-dir")
			require.NoError(t, os.WriteFile(blocker, nil, 0o600))
			for _, path := range []string{
				filepath.Join(parent, "missing", "backup.db"), // no such directory
				filepath.Join(blocker, "backup.db"),           // a file where the directory should be
			} {
				code, out, errOut := run(t, dir, "backup", path)
				require.Equal(t, 1, code)
				require.Empty(t, out)
				require.Contains(t, errOut, "no backup was written")
			}
			if os.Geteuid() != 0 { // root writes anywhere
				ro := filepath.Join(parent, "read-only")
				require.NoError(t, os.Mkdir(ro, 0o500))
				code, _, errOut := run(t, dir, "backup", filepath.Join(ro, "backup.db"))
				require.Equal(t, 1, code)
				require.Contains(t, errOut, "permission denied")
			}
			entries, err := os.ReadDir(parent)
			require.NoError(t, err)
			for _, e := range entries {
				require.Contains(t, []string{"not-a-dir", "read-only"}, e.Name(), "nothing else is left behind")
			}
		})
	}
}

func TestBackupWithoutStore(t *testing.T) {
	t.Parallel()
	code, _, errOut := run(t, t.TempDir(), "backup", filepath.Join(t.TempDir(), "b.db"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "nothing to back up")
}
