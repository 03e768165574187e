package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
)

// newPluginsReloadCmd is `flowgate plugins reload NAME`: the running
// gateway replaces the plugin's process.
func newPluginsReloadCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "reload NAME",
		Short: "Restart one controller plugin of the running gateway (after a rebuild), resetting its last error",
		Long: `Restart one controller plugin of the running gateway, for instance after
rebuilding its executable: the gateway shuts its process down, resets its
restart count, restart budget and last error, and starts it again with the
same checks as at start (path, sha256, the name it reports). A plugin left
failed comes back too. The events it was handling are delivered again.

The gateway's config is not read again: to change a plugin's entry, restart
the gateway. Exits 0 once the new process runs, 2 for a config mistake (the
message names the key), 1 when it could not start for another reason or no
gateway runs.`,
		Args: args(1, "one plugin name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				st, err := c.ReloadPlugin(ctx, a[0])
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(st, func(w io.Writer) {
					fmt.Fprintf(w, "Reloaded plugin %s: %s, pid %d, version %s.\n", clean(st.Name), st.State, st.PID, orNA(clean(st.Version)))
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plugin's status as JSON")
	return cmd
}
