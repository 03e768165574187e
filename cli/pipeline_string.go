package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// workflowExts are the extensions of workflow files (lobster-format §2).
var workflowExts = []string{".lobster", ".yaml", ".yml", ".json"}

// isWorkflowPath tells a workflow file from a pipeline string in pipeline
// run's arguments, by Lobster's rule: exactly one argument, without "|",
// that is a regular file with a workflow extension. Unlike Lobster, one
// argument that only looks like such a file (no blanks, a workflow
// extension) counts as one too, so a mistyped path says the file is
// missing rather than "Unknown command: x.lobster".
func isWorkflowPath(a []string) bool {
	if len(a) != 1 || strings.Contains(a[0], "|") {
		return false
	}
	ext := strings.ToLower(filepath.Ext(a[0]))
	isExt := false
	for _, x := range workflowExts {
		isExt = isExt || ext == x
	}
	if !isExt {
		return false
	}
	st, err := os.Stat(a[0])
	if err != nil {
		return !strings.ContainsAny(a[0], " \t\r\n")
	}
	return st.Mode().IsRegular()
}

// pipelineString is a pipeline run of a pipeline string.
type pipelineString struct {
	text, argsJSON, gateTimeout string
	tool, dryRun, detach        bool
	budget                      *budgetFlags
	finish                      finishFlags
	notify                      notifySettings
}

// runPipelineString runs a pipeline string as a managed flow, as lobster
// run does: a parse error is "Parse error: …" (exit 2, a parse_error
// envelope in tool mode); --dry-run prints the stages on stderr.
func (e *env) runPipelineString(cmd *cobra.Command, p pipelineString) error {
	stages, perr := flows.ParsePipeline(p.text)
	provided, err := parseArgsJSON(p.argsJSON)
	if perr != nil {
		//lint:ignore ST1005 Lobster's message
		err = usageError{fmt.Errorf("Parse error: %w", perr)}
	}
	if err != nil {
		if p.tool {
			_ = failed("parse_error", cmp.Or(perr, err).Error(), "").write(e.stdout)
			return exitStatus{code: exitUsage}
		}
		return err
	}
	if p.dryRun {
		set, err := e.stageSet(cmd.Context())
		if err != nil {
			return err
		}
		plan, err := flows.PipelineDryRun(stages, set.has)
		var unknown *flows.UnknownCommandError
		if errors.As(err, &unknown) {
			return set.refuse(err, unknown.Name)
		}
		for _, st := range stages {
			if err := pipeline.CheckStageSecret(set.secretEnv, st); err != nil {
				return usageError{err}
			}
		}
		if err != nil {
			return err
		}
		fmt.Fprint(e.stderr, plan)
		return nil
	}
	b, timeout, err := runLimits(p.budget, p.gateTimeout)
	if err != nil {
		return err
	}
	return e.withLink(cmd, func(ctx context.Context, l *link) error {
		in := apitype.CreateFlowInput{Budget: b, OnFinish: p.finish.notify()}
		p.notify.flow(&in)
		f, err := startPipeline(ctx, l.c, flows.Invocation{Pipeline: p.text}, provided, "pipeline: "+p.text, timeout, in)
		if err != nil {
			return err
		}
		return e.followStarted(ctx, l, f, p.detach, p.tool)
	})
}

// stageOptions are the pipeline controller's options for the home: its
// state and stages directories, and the stage_path and the model stages'
// pipeline.secret_env of its gateway.yaml.
func (e *env) stageOptions() (pipeline.Options, error) {
	dir, err := e.home()
	if err != nil {
		return pipeline.Options{}, err
	}
	fc, err := gateway.HomeConfig(dir, "")
	if err != nil {
		return pipeline.Options{}, err
	}
	o := pipeline.HomeOptions(dir, fc.StagePath)
	o.SecretEnv = fc.Pipeline.SecretEnv
	return o, nil
}

// runLimits reads pipeline run's --budget flags and --gate-timeout.
func runLimits(budget *budgetFlags, gateTimeout string) (*sdk.Budget, time.Duration, error) {
	b, err := budget.budget()
	if err != nil {
		return nil, 0, err
	}
	var timeout time.Duration
	if gateTimeout != "" {
		if timeout, err = api.ParseGateTimeout(gateTimeout); err != nil {
			return nil, 0, usageError{fmt.Errorf("--gate-timeout: %w", err)}
		}
	}
	return b, timeout, nil
}

// followStarted follows a started pipeline flow to its end or a gate and
// reports it, or with detach says how to follow it.
func (e *env) followStarted(ctx context.Context, l *link, f *sdk.Flow, detach, tool bool) error {
	if detach {
		fmt.Fprintf(e.stdout, "Pipeline flow %s started. Follow it: flowgate tasks flow show %s\n", f.ID, f.ID)
		return nil
	}
	v, err := e.followPipeline(ctx, l, f.ID, tool)
	if err != nil {
		return err
	}
	return e.reportPipeline(ctx, l, v, tool)
}
