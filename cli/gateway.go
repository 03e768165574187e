package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins"
	"github.com/flowgate/flowgate/sdk"
)

func newGatewayCmd(e *env) *cobra.Command {
	var (
		configPath, level string
		logJSON           bool
		web               gateway.HTTPConfig
	)
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Run the gateway in the foreground",
		Long: `Run the gateway in the foreground: it owns the store, runs queued tasks
under supervising shims, reattaches to tasks left running by an earlier
gateway, and serves the API on $FLOWGATE_HOME/gateway.sock for the other
commands. Its config is --config FILE, else $FLOWGATE_HOME/gateway.yaml when
it exists; a gateway a command hosts in-process reads the same file (all of
it but the http listener). SIGINT or SIGTERM stops it gracefully, within 15 seconds: running
tasks keep running and the next gateway picks them up. On etcd, a gateway that lost
its membership joins again by itself, and exits 1 when it cannot within ten lease TTLs.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := e.home()
			if err != nil {
				return err
			}
			fc, err := gateway.HomeConfig(dir, configPath)
			if err != nil {
				return usageError{err}
			}
			setHTTPFlags(cmd, &fc.HTTP, web)
			if !cmd.Flags().Changed("log-level") && fc.LogLevel != "" {
				level = fc.LogLevel
			}
			if hclog.LevelFromString(level) == hclog.NoLevel {
				return usageError{fmt.Errorf("--log-level %q is not one of trace, debug, info, warn, error", level)}
			}
			logger := hclog.New(&hclog.LoggerOptions{Name: "flowgate", Level: hclog.LevelFromString(level), JSONFormat: logJSON, Output: e.stderr})
			g, err := gateway.New(gateway.Config{Home: dir, File: fc, Logger: logger, Builtins: plugins.Names(), Controllers: plugins.Controllers(), Store: e.store})
			if err != nil {
				return usageError{err}
			}
			return runGateway(cmd.Context(), g)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML gateway config file (limits, retention, log_level; default $FLOWGATE_HOME/gateway.yaml when it exists)")
	cmd.Flags().StringVar(&level, "log-level", "info", "log level: trace, debug, info, warn, error")
	cmd.Flags().BoolVar(&logJSON, "log-json", false, "log JSON lines instead of text")
	cmd.Flags().StringVar(&web.Addr, "http", "", "serve the run center (the web page), /metrics, /healthz and /readyz on this TCP address, such as 127.0.0.1:7070 (off by default)")
	cmd.Flags().StringVar(&web.AuthToken, "auth-token", "", "token every request to --http must carry (as a bearer token or the run center login); its holder answers gates as admin; required (or http.tokens) on a non-loopback address, with TLS or without")
	cmd.Flags().StringVar(&web.TLSCert, "tls-cert", "", "PEM certificate: serve --http over TLS (with --tls-key)")
	cmd.Flags().StringVar(&web.TLSKey, "tls-key", "", "PEM private key for --tls-cert")
	cmd.AddCommand(newGatewayStatusCmd(e))
	cmd.AddCommand(newServiceCmds(e)...)
	return cmd
}

// setHTTPFlags lays the --http, --auth-token, --tls-cert and --tls-key
// flags given on the command line over the config file's http section.
func setHTTPFlags(cmd *cobra.Command, c *gateway.HTTPConfig, flags gateway.HTTPConfig) {
	for name, pair := range map[string][2]*string{
		"http": {&c.Addr, &flags.Addr}, "auth-token": {&c.AuthToken, &flags.AuthToken},
		"tls-cert": {&c.TLSCert, &flags.TLSCert}, "tls-key": {&c.TLSKey, &flags.TLSKey},
	} {
		if cmd.Flags().Changed(name) {
			*pair[0] = *pair[1]
		}
	}
}

// stopTimeout bounds how long a gateway takes to stop after SIGINT or
// SIGTERM.
const stopTimeout = 15 * time.Second

// runGateway starts g and serves until SIGINT or SIGTERM, then stops it
// within stopTimeout. A gateway that stopped by itself (gateway.Lost:
// it could not join its etcd installation again) fails the command, so
// that its service manager starts it again.
func runGateway(ctx context.Context, g *gateway.Gateway) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := g.Start(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case err := <-g.Lost():
		return err
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	// A part waiting on a store that does not answer (etcd gone) may
	// outlast stopCtx; the process exits all the same, as after a
	// crash, which the next gateway recovers from.
	stopped := make(chan error, 1)
	go func() { stopped <- g.Stop(stopCtx) }()
	select {
	case err := <-stopped:
		return err
	case <-stopCtx.Done():
		return fmt.Errorf("gateway: did not stop within %s; exiting all the same: its running tasks go on under their shims for the next gateway", stopTimeout)
	}
}

func newGatewayStatusCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Tell whether a gateway runs for this home, and what it holds",
		Long:  "Print whether a gateway serves this home: its pid, uptime and record counts. Exits 1 when none runs.",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := e.home()
			if err != nil {
				return err
			}
			c, err := gateway.Dial(dir, gateway.StartWait)
			if errors.Is(err, api.ErrNoGateway) {
				if err := api.RequireHome(dir); err != nil {
					return err
				}
				st := api.GatewayStatus{Home: dir}
				if perr := (printer{e.stdout, asJSON}).emit(st, func(w io.Writer) {
					fmt.Fprintf(w, "No gateway is running for %s. Start one with: flowgate gateway\n", dir)
				}); perr != nil {
					return perr
				}
				return exitStatus{code: exitFailure}
			}
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.Status(cmd.Context())
			if err != nil {
				return err
			}
			return printer{e.stdout, asJSON}.emit(st, func(w io.Writer) {
				fmt.Fprintf(w, "Gateway running for %s\n", st.Home)
				var t table
				t.add("  pid:", fmt.Sprint(st.PID))
				t.add("  uptime:", time.Duration(st.Uptime*float64(time.Second)).Round(time.Second).String())
				t.add("  tasks:", fmt.Sprintf("%d running (cap %d) · %d queued · %d total", st.Tasks[sdk.TaskRunning], st.MaxRunning, st.Tasks[sdk.TaskQueued], total(st.Tasks)))
				t.add("  flows:", fmt.Sprintf("%d active · %d waiting · %d total", st.Flows[sdk.FlowQueued]+st.Flows[sdk.FlowRunning], st.Flows[sdk.FlowWaiting], total(st.Flows)))
				if st.HTTPAddr != "" {
					t.add("  run center:", st.HTTPURL())
				}
				if st.Store != nil {
					t.add("  store:", writeLine("store", *st.Store))
				}
				if st.TaskFiles != nil && !st.TaskFiles.Writable {
					t.add("  task files:", writeLine("task files", *st.TaskFiles))
				}
				t.write(w)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// writeLine says whether what (the store, task files) takes writes and,
// when it does not, why, since when and what to do.
func writeLine(what string, h api.WriteHealth) string {
	if h.Writable {
		return "writable"
	}
	last := "none since the gateway started"
	if !h.LastWriteAt.IsZero() {
		last = h.LastWriteAt.Format(time.RFC3339)
	}
	return fmt.Sprintf("%s (%d writes failed in a row, the last at %s: %s; last write that succeeded: %s)",
		h.Problem(what), h.Failures, h.LastErrorAt.Format(time.RFC3339), h.LastError, last)
}

func total[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
