package cli

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// newShimCmd is the internal command the runner starts for every task
// attempt; it is hidden from help.
func newShimCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "shim <attempt-dir>",
		Short:  "Supervise one task attempt (internal: started by the gateway)",
		Hidden: true,
		Args:   args(1, "one attempt directory"),
		Run: func(_ *cobra.Command, a []string) {
			os.Exit(shim.Main(a[0]))
		},
	}
}
