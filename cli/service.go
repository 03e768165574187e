package cli

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/gateway"
)

// newServiceCmds returns "gateway install-service" and "gateway
// uninstall-service".
func newServiceCmds(e *env) []*cobra.Command {
	var (
		userScope, dryRun bool
		configPath        string
	)
	flags := func(cmd *cobra.Command) {
		cmd.Flags().BoolVar(&userScope, "user", false, "a per-user service (systemd --user, a launchd agent) instead of a system one")
		cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be written and run, and change nothing")
	}
	do := func(cmd *cobra.Command, plan func(gateway.ServiceConfig) (gateway.ServicePlan, error)) error {
		c, err := e.serviceConfig(userScope, configPath)
		if err != nil {
			return err
		}
		p, err := plan(c)
		if err != nil {
			return usageError{err}
		}
		if dryRun {
			fmt.Fprint(e.stdout, p.String())
			return nil
		}
		return p.Apply(func(argv []string) error {
			fmt.Fprintf(e.stderr, "run: %s\n", strings.Join(argv, " "))
			x := exec.CommandContext(cmd.Context(), argv[0], argv[1:]...)
			x.Stdout, x.Stderr = e.stdout, e.stderr
			return x.Run()
		})
	}
	install := &cobra.Command{
		Use:   "install-service",
		Short: "Install the gateway as a systemd (Linux) or launchd (macOS) service and start it",
		Long: `Install the gateway as a service and start it: a systemd unit on Linux, a
launchd property list on macOS, running "flowgate gateway" on this home
with this binary. The service restarts the gateway when it fails, and
stopping it stops only the gateway: running tasks keep running under their
shims and the next gateway picks them up. --dry-run prints the file and the
commands instead.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error { return do(cmd, gateway.InstallService) },
	}
	flags(install)
	install.Flags().StringVar(&configPath, "config", "", "YAML gateway config file the service passes to flowgate gateway")
	uninstall := &cobra.Command{
		Use:   "uninstall-service",
		Short: "Stop the gateway service (not its tasks) and remove it",
		Long: `Stop the gateway service, unload it and remove the file install-service
wrote. Running tasks keep running; start a gateway again to follow them.
--dry-run prints the commands instead.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error { return do(cmd, gateway.UninstallService) },
	}
	flags(uninstall)
	return []*cobra.Command{install, uninstall}
}

// serviceConfig describes the service for this binary, home and user.
func (e *env) serviceConfig(userScope bool, configPath string) (gateway.ServiceConfig, error) {
	dir, err := e.home()
	if err != nil {
		return gateway.ServiceConfig{}, err
	}
	c := gateway.ServiceConfig{OS: runtime.GOOS, User: userScope, UID: os.Getuid()}
	if c.Home, err = filepath.Abs(dir); err != nil {
		return gateway.ServiceConfig{}, fmt.Errorf("resolve the home %s: %w", dir, err)
	}
	if configPath != "" {
		if c.Config, err = filepath.Abs(configPath); err != nil {
			return gateway.ServiceConfig{}, fmt.Errorf("resolve the config file %s: %w", configPath, err)
		}
	}
	if c.Exe, err = os.Executable(); err != nil {
		return gateway.ServiceConfig{}, fmt.Errorf("find the flowgate binary to run as a service: %w; install it with go install and run it by its path", err)
	}
	if exe, err := filepath.EvalSymlinks(c.Exe); err == nil {
		c.Exe = exe
	}
	c.UserHome, _ = os.UserHomeDir()
	if u, err := user.Current(); err == nil {
		c.UserName = u.Username
	}
	return c, nil
}
