package cli

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/gateway"
)

// newPluginsTestCmd is `flowgate plugins test PATH [ARGS...]`: the
// conformance harness (host/plugintest) run against one plugin.
func newPluginsTestCmd(e *env) *cobra.Command {
	var (
		asJSON  bool
		timeout time.Duration
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "test PATH [ARGS...]",
		Short: "Check a controller plugin, in any language, against an embedded gateway (docs/protocol.md)",
		Long: `Starts the plugin at PATH (with ARGS) under a gateway embedded in this
command, on a store in a temporary directory, and drives it through the
conformance cases of docs/protocol.md: start, events in order, a
redelivered event, a stale revision, a cancel, a restart mid-flow, a
lost answer to CreateFlow, and each pipeline stage it declares.
Each case prints PASS or FAIL with what the plugin did. Exits 0 when every
case passes, 1 otherwise. Flags go before PATH; everything after PATH is
passed to the plugin.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("name the plugin's executable: flowgate plugins test PATH [ARGS...]")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := pluginPath(args[0])
			if err != nil {
				return err
			}
			logger := hclog.NewNullLogger()
			if verbose {
				logger = hclog.New(&hclog.LoggerOptions{Name: "plugins-test", Level: hclog.Debug, Output: e.stderr})
			}
			rep, err := gateway.TestPlugin(cmd.Context(), gateway.PluginTestConfig{Path: path, Args: args[1:], Timeout: timeout, Logger: logger})
			if err != nil {
				return err
			}
			if err := (printer{e.stdout, asJSON}).emit(rep, func(w io.Writer) { writePluginTest(w, rep) }); err != nil {
				return err
			}
			if !rep.Passed() {
				return exitStatus{code: exitFailure}
			}
			return nil
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the plugin at each step")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print the embedded gateway's log, the plugin's included, to stderr")
	return cmd
}

// pluginPath resolves PATH as the gateway would run it: a bare name on
// PATH, anything else relative to the working directory.
func pluginPath(arg string) (string, error) {
	if !strings.Contains(arg, "/") {
		p, err := exec.LookPath(arg)
		if err != nil {
			return "", usageError{fmt.Errorf("no executable %q on PATH; give the plugin's path (./plugin)", arg)}
		}
		return p, nil
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return "", usageError{fmt.Errorf("plugin path %s: %w", arg, err)}
	}
	if _, err := exec.LookPath(abs); err != nil {
		return "", usageError{fmt.Errorf("%s is not an executable file (build it, or chmod +x it): %w", arg, err)}
	}
	return abs, nil
}

func writePluginTest(w io.Writer, rep gateway.PluginTestReport) {
	version := ""
	if rep.Version != "" {
		version = " " + clean(rep.Version)
	}
	fmt.Fprintf(w, "Plugin: %s%s\n", clean(rep.Plugin), version)
	passed := 0
	for _, c := range rep.Cases {
		mark := "FAIL"
		if c.Pass {
			mark = "PASS"
			passed++
		}
		fmt.Fprintf(w, "%s %s: %s\n", mark, c.Case, clean(c.Detail))
		for _, d := range c.Did {
			fmt.Fprintf(w, "       %s\n", clean(d))
		}
	}
	fmt.Fprintf(w, "%d of %d cases passed\n", passed, len(rep.Cases))
}
