package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
)

func newTriggersCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "triggers",
		Short: "Add, list, show, enable, disable and remove webhook triggers, and list what they started",
		Long: `A trigger starts work when something posts to it: the gateway's HTTP
listener (--http) serves POST /hooks/NAME, checks GitHub's
X-Hub-Signature-256 HMAC or a bearer token, and starts a workflow file
(--pipeline, the body as its args) or a managed flow of a controller
(--controller, the body as its state). A delivery sent again (same
X-GitHub-Delivery, Idempotency-Key, or body) answers with the flow the
first one started. Triggers live in the store of the home; see
docs/triggers.md.`,
	}
	cmd.AddCommand(newTriggersAddCmd(e), newTriggersListCmd(e), newTriggersShowCmd(e),
		newTriggersEnableCmd(e, true), newTriggersEnableCmd(e, false), newTriggersRemoveCmd(e), newTriggersRunsCmd(e))
	return cmd
}

func newTriggersAddCmd(e *env) *cobra.Command {
	var (
		in     api.TriggerInput
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "add NAME (--pipeline FILE | --controller ID) (--secret-env VAR | --token-env VAR) [flags]",
		Short: "Add a webhook trigger served at POST /hooks/NAME",
		Args:  args(1, "one trigger name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			pipe, err := checkPipeline(in.Pipeline)
			if err != nil {
				return err
			}
			in := in
			in.Name, in.Pipeline = a[0], pipe
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				t, err := c.AddTrigger(ctx, in)
				if err != nil {
					return err
				}
				if m := t.Missing(os.Getenv); len(m) > 0 {
					fmt.Fprintf(e.stderr, "Note: %v is not set here; the gateway reads it from its own environment, so set it where the gateway runs.\n", m)
				}
				return printer{e.stdout, asJSON}.emit(t, func(w io.Writer) {
					fmt.Fprintf(w, "Added trigger %s: POST /hooks/%s starts %s.\n", t.Name, t.Name, clean(targetText(t)))
				})
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&in.Pipeline, "pipeline", "", "workflow file a delivery runs, with the delivery as its args")
	fl.StringVar(&in.Controller, "controller", "", "controller id whose managed flow a delivery creates, with the delivery as its state")
	fl.StringVar(&in.ArgsFrom, "args-from", "", "where a delivery's input is read: body (JSON, default) or query (the URL's query as an object of strings)")
	fl.StringVar(&in.SecretEnv, "secret-env", "", "name of the gateway's environment variable holding the HMAC secret (GitHub's webhook secret)")
	fl.StringVar(&in.TokenEnv, "token-env", "", "name of the gateway's environment variable holding a bearer token")
	fl.Int64Var(&in.MaxBody, "max-body", 0, "largest body accepted, in bytes (default 1 MiB); larger gets 413")
	fl.Float64Var(&in.Rate, "rate", 0, "deliveries per second accepted over time (default 10); more gets 429")
	fl.IntVar(&in.Burst, "burst", 0, "deliveries accepted at once before --rate applies (default 20)")
	fl.BoolVar(&in.Disabled, "disabled", false, "store the trigger disabled")
	fl.BoolVar(&asJSON, "json", false, "print the trigger as JSON")
	return cmd
}

// targetText says what a trigger starts.
func targetText(t api.Trigger) string {
	if t.Target == api.TargetPipeline {
		return "the workflow " + t.Pipeline
	}
	return "a flow of controller " + t.Controller
}

// triggerList is the JSON shape of `triggers list`.
type triggerList struct {
	Count    int           `json:"count"`
	Triggers []api.Trigger `json:"triggers"`
}

func newTriggersListCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List triggers by name",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				ts, err := c.ListTriggers(ctx)
				if err != nil {
					return err
				}
				out := triggerList{Count: len(ts), Triggers: ts}
				return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) {
					fmt.Fprintf(w, "Triggers: %d\n", out.Count)
					if out.Count == 0 {
						fmt.Fprintln(w, "No triggers; add one with triggers add NAME.")
						return
					}
					var tb table
					tb.add("Name", "Starts", "Auth", "Enabled")
					for _, t := range ts {
						tb.add(t.Name, clip(clean(targetText(t)), 60), authText(t), strconv.FormatBool(t.Enabled))
					}
					tb.write(w)
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// authText names the checks a trigger accepts.
func authText(t api.Trigger) string {
	switch {
	case t.SecretEnv != "" && t.TokenEnv != "":
		return "hmac $" + t.SecretEnv + ", token $" + t.TokenEnv
	case t.SecretEnv != "":
		return "hmac $" + t.SecretEnv
	}
	return "token $" + t.TokenEnv
}

func newTriggersShowCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one trigger",
		Args:  args(1, "one trigger name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				t, err := c.GetTrigger(ctx, a[0])
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(t, func(w io.Writer) {
					fmt.Fprintln(w, "Trigger:")
					var tb table
					row := func(k, v string) { tb.add("  "+k+":", v) }
					row("name", t.Name)
					row("hook", "POST /hooks/"+t.Name)
					row("enabled", strconv.FormatBool(t.Enabled))
					row("starts", clean(targetText(t)))
					row("argsFrom", t.ArgsFrom)
					row("auth", authText(t))
					row("maxBody", strconv.FormatInt(t.MaxBody, 10)+" bytes")
					row("rate", strconv.FormatFloat(t.Rate, 'g', -1, 64)+"/s, burst "+strconv.Itoa(t.Burst))
					row("created", stamp(t.CreatedAt))
					if tg := t.LastToggle; tg != nil {
						row("lastToggle", toggleText(tg.Enabled, tg.By, tg.At))
					} else {
						row("lastToggle", "none since it was added")
					}
					tb.write(w)
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the trigger as JSON")
	return cmd
}

func newTriggersEnableCmd(e *env, enabled bool) *cobra.Command {
	verb, past := "disable", "Disabled"
	if enabled {
		verb, past = "enable", "Enabled"
	}
	var (
		asJSON bool
		by     string
	)
	short := strings.ToUpper(verb[:1]) + verb[1:] + " a trigger (a disabled one answers 404 to deliveries)"
	cmd := &cobra.Command{
		Use:   verb + " NAME [--by NAME] [--json]",
		Short: short,
		Long: short + `.

The trigger keeps who last enabled or disabled it, and when (--by, else
the OS user); triggers show prints it as lastToggle. A trigger already
` + verb + `d is left as it is.`,
		Args: args(1, "one trigger name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				t, err := c.SetTriggerEnabled(ctx, a[0], enabled, newDecision(by).By)
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(t, func(w io.Writer) { fmt.Fprintf(w, "%s trigger %s.\n", past, t.Name) })
			})
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "who "+verb+"s the trigger, for its record (default: the OS user)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the trigger as JSON")
	return cmd
}

func newTriggersRemoveCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a trigger and its delivery records (the flows it started stay)",
		Args:  args(1, "one trigger name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withClient(cmd, func(ctx context.Context, c api.Client) error {
				t, err := c.RemoveTrigger(ctx, a[0])
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(t, func(w io.Writer) { fmt.Fprintf(w, "Removed trigger %s.\n", t.Name) })
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the trigger as it was, as JSON")
	return cmd
}

// triggerRuns is the JSON shape of `triggers runs`.
type triggerRuns struct {
	Count int              `json:"count"`
	Runs  []api.TriggerRun `json:"runs"`
}

func newTriggersRunsCmd(e *env) *cobra.Command {
	var (
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "runs NAME",
		Short: "List the deliveries a trigger accepted and the flows they started, newest first",
		Args:  args(1, "one trigger name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if limit < 0 {
				return usageError{fmt.Errorf("--limit must not be negative (got %d)", limit)}
			}
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				runs, err := c.TriggerRuns(ctx, a[0], limit)
				if err != nil {
					return err
				}
				out := triggerRuns{Count: len(runs), Runs: runs}
				return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) {
					fmt.Fprintf(w, "Runs: %d\n", out.Count)
					if out.Count == 0 {
						return
					}
					var tb table
					tb.add("At", "Delivery", "Flow")
					for _, r := range runs {
						tb.add(stamp(r.At), clip(clean(r.Delivery), 48), r.FlowID)
					}
					tb.write(w)
				})
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "show at most this many runs (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
