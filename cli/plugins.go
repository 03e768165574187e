package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/plugins"
	"github.com/flowgate/flowgate/sdk"
)

func newPluginsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "Show, reload and check the gateway's controller plugins",
		Args:  args(0, "no arguments"),
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List controller plugins: name, version, state, pid, restarts, pending events",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				ps, err := c.Plugins(ctx)
				if errors.Is(err, api.ErrNoGateway) {
					fmt.Fprintln(e.stderr, "No gateway is running: plugins run inside the gateway. Start one with: flowgate gateway")
					ps, err = []api.PluginStatus{}, nil
				}
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(map[string]any{"count": len(ps), "plugins": ps}, func(w io.Writer) {
					writePlugins(w, ps)
				})
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(list, newPluginsNewCmd(e), newPluginsTestCmd(e), newPluginsReloadCmd(e), newPluginsCheckCmd(e))
	return cmd
}

func writePlugins(w io.Writer, ps []api.PluginStatus) {
	fmt.Fprintf(w, "Plugins: %d\n", len(ps))
	if len(ps) == 0 {
		fmt.Fprintln(w, "No plugins configured (add them under plugins: in the gateway config).")
		return
	}
	var t table
	t.add("Name", "Version", "State", "PID", "Restarts", "Pending", "Since", "Last error")
	for _, p := range ps {
		pid := "-"
		if p.PID > 0 {
			pid = strconv.Itoa(p.PID)
		}
		if p.InProcess {
			pid += " (gateway)"
		}
		t.add(clean(p.Name), orNA(clean(p.Version)), string(p.State), pid, strconv.Itoa(p.Restarts), strconv.Itoa(p.Pending),
			time.Since(p.Since).Round(time.Second).String()+" ago", clip(firstLine(p.LastError), 100))
	}
	t.write(w)
	for _, p := range ps {
		if p.State == api.PluginRunning || (p.Exit == "" && len(p.Stderr) == 0) {
			continue
		}
		fmt.Fprintf(w, "\n%s did not start (%s); the last %d line(s) of its stderr:\n", clean(p.Name), orNA(p.Exit), len(p.Stderr))
		for _, l := range p.Stderr {
			fmt.Fprintf(w, "  %s\n", clean(l))
		}
	}
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// newPluginCmd is `flowgate plugin serve NAME`: the flowgate executable
// serving one of its first-party controllers as a go-plugin process. The
// gateway starts it; people do not.
func newPluginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:    "plugin",
		Short:  "Serve a first-party controller plugin (started by the gateway)",
		Hidden: true,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "serve NAME",
		Short: "Serve the first-party controller NAME over go-plugin",
		Args:  args(1, "one plugin name"),
		RunE: func(_ *cobra.Command, a []string) error {
			c, ok := plugins.Builtin(a[0])
			if !ok {
				return usageError{fmt.Errorf("no first-party plugin is named %q (this flowgate has: %v)", a[0], plugins.Names())}
			}
			sdk.Serve(c)
			os.Exit(0)
			return nil
		},
	})
	return cmd
}
