package cli

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/gateway"
)

// newNotifyCmd is `flowgate notify`: the destinations messages go to.
func newNotifyCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notify",
		Short: "List the named destinations and send a test message to one",
		Long: `Destinations are where flowgate tells people what happened: a name from
the gateway config's notify: map, a URL of a chat, push or mail service
(slack://, discord://, teams://, telegram://, smtp://, ntfy://, gotify://,
generic+https://, …), an https:// webhook that is POSTed the notice JSON,
or cmd:COMMAND, run with the notice JSON on stdin. See docs/notifications.md.`,
	}
	cmd.AddCommand(newNotifyListCmd(e), newNotifyTestCmd(e))
	return cmd
}

// namedDest is one row of notify list.
type namedDest struct {
	Name string `json:"name"`
	// Dest is the destination with everything but its scheme and host
	// masked (dest.RedactAll): the config file holds its secrets.
	Dest string `json:"dest"`
}

func newNotifyListCmd(e *env) *cobra.Command {
	var (
		configPath string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "list [--config FILE] [--json]",
		Short: "List the named destinations of the gateway config, redacted",
		Long: `List the destinations the gateway config names under notify:, each with
its scheme and host only: the rest of a named destination (tokens, paths,
passwords) stays in the config file. ${VAR} refs are shown as written.

The config is --config FILE, else $FLOWGATE_HOME/gateway.yaml.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fc, err := e.checkedConfig(configPath)
			if err != nil {
				return err
			}
			rows := []namedDest{}
			for _, name := range slices.Sorted(maps.Keys(fc.Notify)) {
				rows = append(rows, namedDest{Name: name, Dest: gateway.RedactNamedDest(fc.Notify[name])})
			}
			return printer{e.stdout, asJSON}.emit(map[string]any{"count": len(rows), "destinations": rows}, func(w io.Writer) {
				fmt.Fprintf(w, "Destinations: %d\n", len(rows))
				if len(rows) == 0 {
					fmt.Fprintln(w, `None named; add them to the gateway config, such as notify: {ops: "slack://…"}.`)
					return
				}
				var t table
				t.add("Name", "Destination")
				for _, r := range rows {
					t.add(clean(r.Name), clean(r.Dest))
				}
				t.write(w)
			})
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "the gateway config file (default $FLOWGATE_HOME/gateway.yaml)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: count, and destinations (name, dest)")
	return cmd
}

func newNotifyTestCmd(e *env) *cobra.Command {
	var (
		configPath string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "test DEST [--config FILE] [--json]",
		Short: "Send a test message to a destination now",
		Long: `Send one test message to DEST now and say whether it arrived: DEST is a
name from the gateway config's notify: map or a destination as you would
give it to --notify-to (a URL, or cmd:COMMAND). A chat or mail destination
gets the default template's text; an http(s) or cmd: one the notice JSON
with event notify.test.

The message is sent from this command, not from the gateway: ${VAR} refs
are read from this command's environment, so run it with the gateway's
(for a service, the same environment file). Exits 0 when the destination
took the message, 1 when sending failed (the error says why, with every
secret masked), 2 when DEST or the config is invalid.`,
		Args: args(1, "a destination"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			fc, err := e.checkedConfig(configPath)
			if err != nil {
				return err
			}
			book, err := fc.Book(os.LookupEnv)
			if err != nil {
				return usageError{fmt.Errorf("gateway config: %w", err)}
			}
			spec := argv[0]
			if err := book.Check(spec); err != nil {
				return usageError{err}
			}
			shown := gateway.RedactDest(spec)
			key, err := gateway.SendTestNotice(cmd.Context(), book, spec)
			if err != nil {
				return fmt.Errorf("the test message to %s was not delivered: %w", shown, err)
			}
			return printer{e.stdout, asJSON}.emit(map[string]any{"dest": shown, "key": key, "sent": true}, func(w io.Writer) {
				fmt.Fprintf(w, "Sent a test message to %s (key %s).\n", clean(shown), key)
			})
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "the gateway config file whose notify: names DEST may be (default $FLOWGATE_HOME/gateway.yaml)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: dest (redacted), key, sent")
	return cmd
}
