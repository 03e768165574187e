package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
)

// env is what every command shares: where to write, and how to reach the
// records.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	homeFlag       string
	// store is --store and etcdctl's connection flags: the records are
	// there rather than in the home's bbolt file.
	store gateway.StoreSpec
}

// home resolves the home directory from --home, $FLOWGATE_HOME or the
// default.
func (e *env) home() (string, error) { return gateway.ResolveHome(e.homeFlag) }

// openClient reaches the records of the home: through the running
// gateway's socket when there is one, else by opening the store in this
// process (the same engine code, so the result is the same).
func (e *env) openClient(cmd *cobra.Command) (api.Client, error) {
	return e.reach(
		func(dir string) (api.Client, error) { return api.OpenLocal(dir, cmd.CommandPath()) },
		func(spec gateway.StoreSpec, dir string) (api.Client, error) {
			return api.OpenLocalAt(spec, dir, cmd.CommandPath())
		})
}

// openReader is openClient for the commands that only read: with no
// gateway it opens the store read-only (api.OpenLocalReader), so they never
// write, never create a home, and several run at once.
func (e *env) openReader() (api.Client, error) {
	return e.reach(
		func(dir string) (api.Client, error) { return api.OpenLocalReader(dir) },
		func(spec gateway.StoreSpec, dir string) (api.Client, error) { return api.OpenLocalReaderAt(spec, dir) })
}

// reach opens the store --store names directly, never through a
// gateway's socket: a gateway elsewhere may serve it, and the store's
// transactions keep writers from different machines apart. Without
// --store it connects to the home's gateway, or, when none runs, opens
// the store that gateway serves (gateway.HomeStore): with openAt when it
// is not the home's bbolt file, else with open. A gateway that is being
// restarted (the old one holds the store while it stops, the new one
// before it serves its socket) is waited for, trying the socket and the
// store in turn, up to gateway.RestartWait in all.
func (e *env) reach(open func(dir string) (api.Client, error), openAt func(spec gateway.StoreSpec, dir string) (api.Client, error)) (api.Client, error) {
	if e.store.URL != "" {
		if err := e.store.Validate(); err != nil {
			return nil, usageError{fmt.Errorf("--store: %w", err)}
		}
	}
	dir, err := e.home()
	if err != nil {
		return nil, err
	}
	if e.store.URL != "" {
		return openAt(e.store, dir)
	}
	deadline := time.Now().Add(gateway.RestartWait)
	for {
		c, err := dialOrOpen(dir, time.Until(deadline), open, openAt)
		if err == nil || !passing(err) || !time.Now().Before(deadline) {
			return c, err
		}
		time.Sleep(restartPoll) // a bounded pause while gateways change hands
	}
}

// dialOrOpen is one try of reach: the home's gateway, waited for up to
// wait while it starts, else the store it serves.
func dialOrOpen(dir string, wait time.Duration, open func(dir string) (api.Client, error), openAt func(spec gateway.StoreSpec, dir string) (api.Client, error)) (api.Client, error) {
	c, err := gateway.Dial(dir, wait)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, api.ErrNoGateway) {
		return nil, err
	}
	spec, err := gateway.HomeStore(dir)
	if err != nil {
		return nil, err
	}
	if spec.URL != "" {
		return openAt(spec, dir)
	}
	return open(dir)
}

// withClient runs fn with an open client and closes it after.
func (e *env) withClient(cmd *cobra.Command, fn func(ctx context.Context, c api.Client) error) error {
	c, err := e.openClient(cmd)
	return use(cmd, c, err, fn)
}

// withReader is withClient for the commands that only read (see
// openReader).
func (e *env) withReader(cmd *cobra.Command, fn func(ctx context.Context, c api.Client) error) error {
	c, err := e.openReader()
	return use(cmd, c, err, fn)
}

// use runs fn with c, unless opening c failed with err, and closes c after.
func use(cmd *cobra.Command, c api.Client, err error, fn func(ctx context.Context, c api.Client) error) error {
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(cmd.Context(), c)
}

// NewRoot returns the flowgate command tree reading stdin and writing to
// stdout and stderr.
func NewRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "flowgate",
		Short: "Durable task flows: records, supervised runs, controller plugins and scheduled pipelines",
		Long: `flowgate keeps durable records of multi-step work (flows) and of the
detached runs under them (tasks), with a revision on every flow so that
concurrent writers conflict instead of overwriting each other.

Records live in $FLOWGATE_HOME (default ~/.flowgate); --home overrides it.
Commands wait for the gateway to answer each request for up to
$FLOWGATE_ANSWER_WAIT (a duration, default 30s; a stream for its first
answer, a whole-store check or audit ten times as long); a command whose
request got no answer in that time exits 5, the outcome unknown.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&e.homeFlag, "home", "", "flowgate home directory (default $"+gateway.HomeEnvVar+" or ~/.flowgate)")
	root.PersistentFlags().StringVar(&e.store.URL, "store", "", "keep the records in this store rather than the home's bbolt file: etcd://HOST:2379[,HOST:2379…]/PREFIX or bolt://PATH; commands then open it directly, not through a gateway's socket")
	addEtcdFlags(root.PersistentFlags(), &e.store)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newTasksCmd(e), newGatewayCmd(e), newPipelineCmd(e), newApprovalsCmd(e), newPluginsCmd(e), newPluginCmd(), newShimCmd(), newLLMInvokeCmd(), newDemoCmd(e), newCronCmd(e), newTriggersCmd(e))
	root.AddCommand(newBackupCmd(e), newCheckCmd(e), newSessionsCmd(e), newStoreCmd(e), newClusterCmd(e))
	root.AddCommand(newBenchCmd(e), newVersionCmd(e), newNotifyCmd(e))
	// Cobra's "completion bash|zsh|fish|powershell", added now rather than
	// at Execute so that it is part of the tree the refusal below covers.
	root.InitDefaultCompletionCmd()
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands gives every command group in the tree (a
// command with subcommands and no action of its own) an action: with no
// argument it prints the group's help; with one, that argument is an
// unknown subcommand, refused with exit 2 naming it and the valid ones.
// Without it cobra prints the help and exits 0, so a script cannot tell a
// typo from success.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		var valid []string
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				valid = append(valid, sub.Name())
			}
		}
		return usageError{fmt.Errorf("unknown command %q for %q; valid commands: %s (see %s --help)",
			args[0], cmd.CommandPath(), strings.Join(valid, ", "), cmd.CommandPath())}
	}
}

// Main runs the flowgate command line and returns its exit code: 0 ok, 1
// not found or runtime failure, 2 usage or invalid input, 3 revision
// conflict, 4 audit findings at the --fail-on severity (tasks audit), 5
// outcome unknown (the gateway stopped before it answered).
func Main(args []string, stdout, stderr io.Writer) int {
	return MainIO(args, os.Stdin, stdout, stderr)
}

// MainIO is Main with standard input given.
func MainIO(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return 0
	}
	code := exitCode(err)
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "flowgate: %s\n", msg)
	}
	return code
}

// Run is main for the flowgate binary. A gateway's heap is small and
// churns at every task, so Go's collector would run dozens of times a
// second under load; it may grow to a floor first (KeepHeapFloor).
func Run() {
	gateway.KeepHeapFloor()
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}
