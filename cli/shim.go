package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/gateway"
)

// newShimCmd is the internal command the runner starts for every task
// attempt, or as a pooled shim waiting for the next one when the lean
// flowgate-shim is not installed; it is hidden from help.
func newShimCmd() *cobra.Command {
	var warm bool
	cmd := &cobra.Command{
		Use:    "shim <attempt-dir> | shim --warm",
		Short:  "Supervise one task attempt, or with --warm the attempts handed to it (internal: started by the gateway)",
		Hidden: true,
		Args: func(cmd *cobra.Command, a []string) error {
			if warm {
				return args(0, "no argument with --warm (the gateway hands it the attempts on stdin)")(cmd, a)
			}
			return args(1, "one attempt directory")(cmd, a)
		},
		Run: func(_ *cobra.Command, a []string) {
			if warm {
				os.Exit(gateway.ShimMainWarm())
			}
			os.Exit(gateway.ShimMain(a[0]))
		},
	}
	cmd.Flags().BoolVar(&warm, strings.TrimPrefix(gateway.ShimWarmArg, "--"), false, "wait on stdin for attempts handed over by the gateway, one after another, as a pooled shim (shim.MainWarm)")
	return cmd
}
