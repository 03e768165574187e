package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flowgate/flowgate/host/gateway"
)

func newStoreCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Move the records between store backends (bbolt, etcd)",
	}
	cmd.AddCommand(newStoreMigrateCmd(e))
	return cmd
}

// addEtcdFlags registers etcdctl's connection flags (--cacert, --cert,
// --key, --user) into s.
func addEtcdFlags(fs *pflag.FlagSet, s *gateway.StoreSpec) {
	fs.StringVar(&s.CACert, "cacert", "", "etcd: verify the cluster's certificates with this CA bundle (PEM)")
	fs.StringVar(&s.Cert, "cert", "", "etcd: this client's TLS certificate (PEM), with --key")
	fs.StringVar(&s.Key, "key", "", "etcd: this client's TLS key (PEM), with --cert")
	fs.StringVar(&s.User, "user", "", "etcd: user name[:password] (a name alone takes the password from $FLOWGATE_ETCD_PASSWORD)")
}

func newStoreMigrateCmd(e *env) *cobra.Command {
	var (
		from, to gateway.StoreSpec
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "migrate --from URL --to URL",
		Short: "Copy every record into an empty store of another backend, revisions kept, and verify the copy",
		Long: `Copy every record of one store into another, empty one, so that each key
keeps its value and its revision (a flow's revision stays what it was), then
compare the two key by key. A store is bolt:///path/to/flowgate.db or
etcd://host1:2379,host2:2379/prefix; --cacert, --cert, --key and --user
(named as etcdctl names them) apply to the etcd side.

Stop every gateway and command that writes the source first. The target
must be empty (a new file, or a prefix no one uses): a non-empty one is
refused and nothing is written. A copy that fails part way leaves the target
partly written; empty it before running again.

Exit status: 0 when the copy is written and verified, 1 on any failure.`,
		Example: `  flowgate store migrate --from bolt://$HOME/.flowgate/flowgate.db --to etcd://10.0.0.1:2379,10.0.0.2:2379/flowgate/prod --cacert ca.pem --cert me.pem --key me-key.pem
  flowgate store migrate --from etcd://localhost:2379/flowgate --to bolt:///var/backups/flowgate.db`,
		Args: args(0, "no arguments (use --from and --to)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from.URL == "" || to.URL == "" {
				return usageError{fmt.Errorf("store migrate needs both --from and --to, such as --from bolt:///path/flowgate.db --to etcd://host:2379/flowgate")}
			}
			// The connection flags belong to whichever side is etcd.
			conn := e.store
			conn.URL = ""
			if !from.IsEtcd() && !to.IsEtcd() && conn != (gateway.StoreSpec{}) {
				return usageError{fmt.Errorf("--cacert, --cert, --key and --user are for an etcd:// store, and neither --from nor --to is one")}
			}
			from.CACert, from.Cert, from.Key, from.User = etcdSide(from, conn)
			to.CACert, to.Cert, to.Key, to.User = etcdSide(to, conn)
			for _, s := range []gateway.StoreSpec{from, to} {
				if err := s.Validate(); err != nil {
					return usageError{err}
				}
			}
			rep, err := gateway.MigrateStore(cmd.Context(), from, to, "flowgate store migrate")
			if err != nil {
				return err
			}
			return printer{e.stdout, asJSON}.emit(rep, func(w io.Writer) {
				fmt.Fprintf(w, "Copied %d keys from %s to %s in %d rounds (%d writes); the copy is verified.\n", rep.Keys, from.URL, to.URL, rep.MaxRevision, rep.Writes)
			})
		},
	}
	cmd.Flags().StringVar(&from.URL, "from", "", "the store to copy: bolt://PATH or etcd://HOSTS/PREFIX")
	cmd.Flags().StringVar(&to.URL, "to", "", "the empty store to copy into: bolt://PATH or etcd://HOSTS/PREFIX")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// etcdSide returns the connection settings of flags for s when it is an
// etcd store, and none for a bolt one.
func etcdSide(s, flags gateway.StoreSpec) (cacert, cert, key, user string) {
	if !s.IsEtcd() {
		return "", "", "", ""
	}
	return flags.CACert, flags.Cert, flags.Key, flags.User
}

// homeFileOnly refuses --store for a command that works on the home's
// bbolt file itself (backup, check), which an etcd store has no copy of,
// and refuses a home whose gateway serves another store (gateway.HomeStore):
// its bbolt file is not where the records are.
func (e *env) homeFileOnly(command string) error {
	if e.store.URL != "" {
		return usageError{fmt.Errorf("flowgate %s works on the home's bbolt file and takes no --store; for an etcd store use etcdctl snapshot save and etcdctl check, or copy it into a file with flowgate store migrate --from %s --to bolt:///path/copy.db", command, e.store.URL)}
	}
	dir, err := e.home()
	if err != nil {
		return err
	}
	spec, err := gateway.HomeStore(dir)
	if err != nil || spec.URL == "" {
		return err
	}
	return usageError{fmt.Errorf("flowgate %s works on the home's bbolt file, and the home's gateway serves %s instead; for an etcd store use etcdctl snapshot save and etcdctl check, or copy it into a file with flowgate store migrate --from %s --to bolt:///path/copy.db", command, spec.URL, spec.URL)}
}
