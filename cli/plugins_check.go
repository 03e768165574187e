package cli

import (
	"fmt"
	"io"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/gateway"
)

// newPluginsCheckCmd is `flowgate plugins check`: the plugin entries of a
// gateway config, checked as a gateway's start would, with no gateway.
func newPluginsCheckCmd(e *env) *cobra.Command {
	var (
		configPath string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "check [--config FILE]",
		Short: "Check the plugin entries of a gateway config without starting a gateway",
		Long: `Check every plugin of a gateway config as a gateway's start would, without
starting one: each plugins entry's fields, that its path is an executable,
its sha256, then a brief start of the plugin for its handshake and the name
it reports, which must be the entry's name; then every file of plugins_dir,
which a gateway runs when it passes the handshake and skips otherwise. Each
plugin is shut down at once; it gets no events.

The config is --config FILE, else $FLOWGATE_HOME/gateway.yaml. Exits 0 when
a gateway would start with these plugins (skipped plugins_dir files are
listed, and do not stop a gateway), 1 when an entry would stop it, 2 when
the config file itself is invalid.`,
		Args: args(0, "no arguments, only --config"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fc, err := e.checkedConfig(configPath)
			if err != nil {
				return err
			}
			logger := hclog.New(&hclog.LoggerOptions{Name: "flowgate", Level: hclog.Error, Output: e.stderr})
			results := gateway.CheckPlugins(cmd.Context(), fc, logger)
			mistakes := 0
			for _, r := range results {
				if r.Outcome == gateway.CheckError {
					mistakes++
				}
			}
			if err := (printer{e.stdout, asJSON}).emit(map[string]any{"ok": mistakes == 0, "plugins": results}, func(w io.Writer) {
				writePluginCheck(w, results, mistakes)
			}); err != nil {
				return err
			}
			if mistakes > 0 {
				return exitStatus{code: exitFailure}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "the gateway config file to check (default $FLOWGATE_HOME/gateway.yaml)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: ok, and one result per plugin (key, name, path, version, outcome, error)")
	return cmd
}

// checkedConfig loads the config at path, or the home's, as
// gateway.HomeConfig does (the home is only resolved when path is empty);
// an invalid one is a usage error.
func (e *env) checkedConfig(path string) (gateway.FileConfig, error) {
	var dir string
	if path == "" {
		var err error
		if dir, err = e.home(); err != nil {
			return gateway.FileConfig{}, err
		}
	}
	fc, err := gateway.HomeConfig(dir, path)
	if err != nil {
		return fc, usageError{err}
	}
	return fc, nil
}

// writePluginCheck prints the results of plugins check: a table, then
// what is wrong with each entry that is not ok.
func writePluginCheck(w io.Writer, results []gateway.PluginCheck, mistakes int) {
	skipped := 0
	var t table
	t.add("Outcome", "Key", "Name", "Version", "Path")
	for _, r := range results {
		if r.Outcome == gateway.CheckSkipped {
			skipped++
		}
		t.add(r.Outcome, r.Key, orNA(clean(r.Name)), orNA(clean(r.Version)), orNA(clean(r.Path)))
	}
	fmt.Fprintf(w, "Plugins: %d checked, %d would stop the gateway, %d skipped.\n", len(results), mistakes, skipped)
	if len(results) == 0 {
		fmt.Fprintln(w, "No plugins configured (add them under plugins: or plugins_dir: in the gateway config).")
		return
	}
	t.write(w)
	for _, r := range results {
		switch r.Outcome {
		case gateway.CheckError:
			fmt.Fprintf(w, "error: %s\n", clean(r.Error))
		case gateway.CheckSkipped:
			fmt.Fprintf(w, "skipped %s: %s\n", clean(r.Path), clean(r.Error))
		}
	}
}
