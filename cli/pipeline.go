package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/plugins/pipeline"
)

func newPipelineCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Check, draw and plan Lobster-compatible workflow files",
		Long: `Work with workflow files (.lobster, .yaml, .yml, .json) in Lobster's format.
validate checks a file and every sub-workflow it names; graph draws its
steps; run --dry-run prints the plan with the args resolved.`,
	}
	cmd.AddCommand(newPipelineValidateCmd(e), newPipelineGraphCmd(e), newPipelineRunCmd(e), newPipelineResumeCmd(e), newPipelineContinueCmd(e))
	return cmd
}

// loadWorkflow loads a workflow file; problems with the file are usage
// errors (exit 2) that carry file:line.
func loadWorkflow(path string) (*flows.Workflow, error) {
	wf, err := flows.Load(path)
	if err == nil {
		err = pipeline.CheckBound(wf)
	}
	if err != nil {
		return nil, usageError{err}
	}
	return wf, nil
}

// parseArgsJSON reads --args-json: nil when it is empty, a usage error
// when it is not a JSON object.
func parseArgsJSON(argsJSON string) (map[string]any, error) {
	if argsJSON == "" {
		return nil, nil
	}
	provided, err := flows.ParseArgsJSON(argsJSON)
	if err != nil {
		return nil, usageError{fmt.Errorf("--args-json: %w", err)}
	}
	return provided, nil
}

// workflowArgs resolves the file's args from their defaults and --args-json.
func workflowArgs(wf *flows.Workflow, argsJSON string) (map[string]any, error) {
	provided, err := parseArgsJSON(argsJSON)
	if err != nil {
		return nil, err
	}
	return flows.ResolveArgs(wf, provided), nil
}

func newPipelineValidateCmd(e *env) *cobra.Command {
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a workflow file; every problem is reported with file:line",
		Long: `Check a workflow file; every problem is reported with file:line.

It warns (on stderr) about each arg or step reference pasted into a shell
command or a pipeline:, where a value holding shell syntax runs as code
(in an exec --shell stage), and names the environment variable that holds
the same value. strict_refs: true in the file, or --strict-refs, makes
those errors.

A pipeline: text that does not parse is reported here (exit 2). A run
loads such a file, as Lobster does, and fails the step when it reaches
it, so the step's on_error applies.`,
		Args: args(1, "one workflow file"),
		RunE: func(cmd *cobra.Command, a []string) error {
			wf, err := loadWorkflow(a[0])
			if err == nil {
				// A run fails such a step when it reaches it (its on_error
				// applies); validate reports it beforehand.
				if perr := wf.PipelineErrors(); perr != nil {
					err = usageError{perr}
				}
			}
			if err == nil && strict {
				err = refuseSplices(wf)
			}
			if err == nil {
				err = e.checkStages(cmd.Context(), wf, flows.ResolveArgs(wf, nil))
			}
			if err != nil {
				return err
			}
			warnings := spliceWarnings(wf)
			warnSplices(e.stderr, warnings)
			pipes := flows.Pipelines(wf, flows.ResolveArgs(wf, nil))
			listed := make([]map[string]any, len(pipes))
			for i, p := range pipes {
				listed[i] = map[string]any{"step": p.ID, "stages": p.Names(), "text": p.Text}
			}
			out := map[string]any{"ok": true, "file": a[0], "name": wf.Name, "steps": len(wf.Steps), "warnings": append([]string{}, warnings...)}
			if len(listed) > 0 {
				out["pipelines"] = listed
			}
			return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) {
				fmt.Fprintf(w, "%s: ok (%q, %d steps)\n", a[0], clean(wf.Name), len(wf.Steps))
				for _, p := range pipes {
					fmt.Fprintf(w, "  pipeline %s: %s\n", clean(p.ID), clean(p.StageNames()))
				}
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&strict, "strict-refs", false, "refuse args and step refs pasted into shell commands and pipelines, as strict_refs: true does")
	return cmd
}

// checkStages refuses (exit 2) a workflow whose pipelines name a stage
// that no built-in command, no plugin of the running gateway and no
// executable on the home's stage path provides, saying how to add it, or
// a model stage whose --secret-env the gateway config does not allow.
func (e *env) checkStages(ctx context.Context, wf *flows.Workflow, args map[string]any) error {
	set, err := e.stageSet(ctx)
	if err != nil {
		return err
	}
	err = flows.CheckPipelineCommands(wf, args, set.has)
	var unknown *flows.UnknownStageError
	if errors.As(err, &unknown) {
		return set.refuse(err, unknown.Name)
	}
	if err != nil {
		return err
	}
	for _, p := range flows.Pipelines(wf, args) {
		for _, st := range p.Stages {
			if err := pipeline.CheckStageSecret(set.secretEnv, st); err != nil {
				//lint:ignore ST1005 worded as the reference's other step errors
				return usageError{fmt.Errorf("Workflow step %s: %w", p.ID, err)}
			}
		}
	}
	return nil
}

func newPipelineGraphCmd(e *env) *cobra.Command {
	var format, argsJSON string
	cmd := &cobra.Command{
		Use:   "graph FILE",
		Short: "Draw a workflow's steps as mermaid, dot or ascii",
		Args:  args(1, "one workflow file"),
		RunE: func(_ *cobra.Command, a []string) error {
			wf, err := loadWorkflow(a[0])
			if err != nil {
				return err
			}
			vals, err := workflowArgs(wf, argsJSON)
			if err != nil {
				return err
			}
			g, err := flows.Graph(wf, format, vals)
			if err != nil {
				return usageError{fmt.Errorf("--format %q: %w", format, err)}
			}
			fmt.Fprint(e.stdout, g)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "mermaid", fmt.Sprintf("graph format: %v", flows.GraphFormats()))
	cmd.Flags().StringVar(&argsJSON, "args-json", "", "workflow args as a JSON object")
	return cmd
}

func newPipelineRunCmd(e *env) *cobra.Command {
	var (
		argsJSON, mode, gateTimeout string
		dryRun, detach, strictRefs  bool
		budget                      budgetFlags
		finish                      finishFlags
		notify                      notifyFlags
		fromStep, source            string
		session                     pipelineSessionFlags
		cf                          continueFlags
	)
	cmd := &cobra.Command{
		Use:   "run (FILE | 'PIPELINE') [--args-json J] [--dry-run] [--detach] [--mode tool]",
		Short: "Run a workflow file or a pipeline string as a managed flow and follow it to its end or a gate",
		Long: `Run a workflow file (Lobster's format) as a managed flow of the pipeline
controller: every command step is a task, and an approval or input step
parks the flow until someone answers (flowgate pipeline resume, or
flowgate tasks flow approve|deny|input). With --mode tool the result is
Lobster's JSON envelope, with Lobster's exit codes. With no gateway
running, this command hosts one for its duration; a flow parked at a gate
is resumed by whichever gateway runs next. With --gate-timeout D, a gate
nobody answers within D is denied (reason gate-expired) by the gateway's
sweep, which runs at least once a minute; the deadline is stored with the
gate, so it holds when no gateway runs meanwhile (the next one denies it).
When the gateway dies while this command follows the flow, it follows on
through the next gateway (hosting one if none starts) and exits with the
flow's own outcome; so do pipeline resume and pipeline continue.

With --from-step S --id FLOW, the finished flow FLOW (which ran FILE,
unchanged) is rerun from step S: S and every step after it run again, the
steps before it are reused. It is the operator's explicit "rerun from
here", recorded as the chain's continuation (see tasks flow continue);
--reason says why.

Instead of a file, a typed pipeline string runs the same way, as
lobster run does: 'exec --json --shell "gh pr list --json number" | where
number>10 | json'. The arguments are one pipeline string unless there is
exactly one, without "|", naming a file that ends in .lobster, .yaml,
.yml or .json; quote the string so that your shell passes its pipes.

With --session NAME every command step belongs to the session lineage
NAME of its working directory, as tasks run --session: a step whose agent
reported a session id continues it next run (its resume_prompt when that
run was interrupted; fresh: true steps never do), unless --session-check
says the session is gone. --new archives the lineage of the current
directory first. See docs/agents.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if (fromStep == "") != (source == "") {
				return usageError{fmt.Errorf("--from-step and --id go together: the step to rerun from and the finished flow to rerun")}
			}
			if err := session.validate(); err != nil {
				return err
			}
			if fromStep != "" && session.name != "" {
				return usageError{errors.New("--session applies to new runs, not to --from-step reruns; run the workflow with --session instead")}
			}
			ns, err := notify.settings()
			if err != nil {
				return err
			}
			if fromStep != "" && notify.given() {
				return usageError{errors.New("--notify, --notify-to and --notify-template apply to new runs; a --from-step rerun is told about as the flow it reruns")}
			}
			if fromStep != "" {
				return e.continuePipeline(cmd, source, mode, &cf, rerunFrom{file: a[0], step: fromStep})
			}
			tool := mode == "tool"
			if mode != "" && !tool {
				return usageError{fmt.Errorf("--mode %q: the only mode is tool", mode)}
			}
			if !isWorkflowPath(a) {
				return e.runPipelineString(cmd, pipelineString{text: strings.Join(a, " "), argsJSON: argsJSON, tool: tool, dryRun: dryRun, detach: detach, budget: &budget, finish: finish, notify: ns, gateTimeout: gateTimeout})
			}
			wf, err := loadWorkflow(a[0])
			if err == nil && strictRefs {
				err = refuseSplices(wf)
			}
			var provided map[string]any
			if err == nil {
				provided, err = parseArgsJSON(argsJSON)
			}
			if err != nil {
				if tool {
					_ = failed("parse_error", err.Error(), "").write(e.stdout)
					return exitStatus{code: exitUsage}
				}
				return err
			}
			if dryRun {
				if err := e.checkStages(cmd.Context(), wf, flows.ResolveArgs(wf, provided)); err != nil {
					return err
				}
				fmt.Fprint(e.stdout, flows.DryRun(wf, flows.ResolveArgs(wf, provided)))
				return nil
			}
			b, timeout, err := runLimits(&budget, gateTimeout)
			if err != nil {
				return err
			}
			return e.withLink(cmd, func(ctx context.Context, l *link) error {
				c := l.c
				if session.startOver {
					if err := e.startPipelineOver(ctx, c, session.name); err != nil {
						return err
					}
				}
				abs, err := filepath.Abs(a[0])
				if err != nil {
					return err
				}
				name := wf.Name
				if name == "" {
					name = strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
				}
				in := apitype.CreateFlowInput{Budget: b, OnFinish: finish.notify()}
				ns.flow(&in)
				f, err := startPipeline(ctx, c, flows.Invocation{File: abs, Session: session.name, SessionCheck: session.check}, provided, name, timeout, in)
				if err != nil {
					return err
				}
				return e.followStarted(ctx, l, f, detach, tool)
			})
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args-json", "", "workflow args as a JSON object")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan without running anything")
	cmd.Flags().BoolVar(&strictRefs, "strict-refs", false, "refuse args and step refs pasted into shell commands and pipelines, as strict_refs: true does")
	cmd.Flags().BoolVar(&detach, "detach", false, "print the flow id and return at once")
	cmd.Flags().StringVar(&gateTimeout, "gate-timeout", "", "deny a gate nobody answers within this duration (reason gate-expired), such as 30m or 24h")
	cmd.Flags().StringVar(&mode, "mode", "", "tool: print Lobster's JSON envelope")
	budget.add(cmd.Flags())
	finish.add(cmd.Flags(), "when the flow ends, cancelled as aborted (at least once)")
	notify.add(cmd.Flags(), "flow")
	cmd.Flags().StringVar(&fromStep, "from-step", "", "rerun the finished flow --id from this step, reusing the steps before it")
	cmd.Flags().StringVar(&source, "id", "", "with --from-step: the finished flow to rerun")
	session.add(cmd.Flags())
	cmd.Flags().StringVar(&cf.reason, "reason", "rerun from a step (pipeline run --from-step)", "with --from-step: why the flow is rerun")
	return cmd
}
