package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
)

func newBackupCmd(e *env) *cobra.Command {
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent copy of the store to FILE while the gateway runs",
		Long: `Write a consistent copy of the store to FILE: a hot backup, taken in one
read transaction while tasks and flows keep changing.

With a gateway running, the gateway streams the copy over its socket and
this command writes it; with none, this command reads the store file
itself, read-only. The copy goes to a temporary file next to FILE, is
synced, opened and page-checked, and only then renamed to FILE: FILE is
only ever a complete copy known to pass the check, and a failed backup
leaves nothing behind. An existing FILE is refused unless --force; the
live store file is always refused.

To restore, stop the gateway and copy FILE over $FLOWGATE_HOME/` + gateway.StoreFile + `.

Exit status: 0 when FILE is written and checked, 1 on any failure.`,
		Example: `  flowgate backup /var/backups/flowgate-$(date +%F).db
  flowgate backup --force --json nightly.db`,
		Args: args(1, "the path of the backup FILE"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := e.homeFileOnly("backup"); err != nil {
				return err
			}
			dir, err := e.home()
			if err != nil {
				return err
			}
			path, err := filepath.Abs(a[0])
			if err != nil {
				return usageError{fmt.Errorf("backup FILE %q: %w", a[0], err)}
			}
			s, viaGateway, closeFn, err := openStorage(dir)
			if err != nil {
				return err
			}
			defer closeFn()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := gateway.BackupHome(ctx, s, dir, path, force)
			if err != nil {
				return fmt.Errorf("%w; no backup was written", err)
			}
			res.Gateway = viaGateway
			return printer{e.stdout, asJSON}.emit(res, func(w io.Writer) { writeBackup(w, res) })
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE if it exists")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// openStorage reaches the store of home dir for copying and checking:
// through the running gateway, else read-only in this process (never
// writing, so a damaged file stays as it is). It reports which, and
// returns the function that releases it.
func openStorage(dir string) (s api.Storage, viaGateway bool, closeFn func(), err error) {
	r, err := gateway.Dial(dir, gateway.StartWait)
	if err == nil {
		return r, true, func() { r.Close() }, nil
	}
	if !errors.Is(err, api.ErrNoGateway) {
		return nil, false, nil, err
	}
	l, err := api.OpenLocalReadOnly(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil, fmt.Errorf("no store at %s yet: nothing to back up (flowgate creates it on first use)", gateway.StorePath(dir))
	}
	if err != nil {
		return nil, false, nil, err
	}
	return l, false, func() { l.Close() }, nil
}

func writeBackup(w io.Writer, r api.BackupResult) {
	by := "read from the store file (no gateway running)"
	if r.Gateway {
		by = "streamed by the gateway"
	}
	fmt.Fprintf(w, "Backup: %s\n", clean(r.Path))
	fmt.Fprintf(w, "Size: %s (%d bytes), %s\n", humanBytes(r.Size), r.Size, by)
	fmt.Fprintf(w, "Revision: %d (the store's transaction id at the copy)\n", r.Revision)
	fmt.Fprintf(w, "Keys: %d (%s)\n", r.Keys, orNA(kindCounts(r.Records)))
	fmt.Fprintf(w, "Check: ok (bbolt page check of the copy)\n")
	fmt.Fprintf(w, "Took: %s\n", time.Duration(r.Duration*float64(time.Second)).Round(time.Millisecond))
}

// kindCounts renders counts by kind, "flow 3, task 2", sorted by kind.
func kindCounts(m map[string]int) string {
	var counts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		counts = append(counts, fmt.Sprintf("%s %d", clean(k), m[k]))
	}
	return strings.Join(counts, ", ")
}

// humanBytes renders n bytes in binary units.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
