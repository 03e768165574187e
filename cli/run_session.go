package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/sdk"
)

// sessionFlags are the --session flags of tasks run.
type sessionFlags struct {
	name, step, prompt, resumePrompt, check string
	fresh                                   bool // --new
}

func (f *sessionFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.name, "session", "", "continue the agent session NAME of this workspace (see flowgate sessions)")
	fl.StringVar(&f.step, "step", "", "with --session, the step of the lineage this task is (default main)")
	fl.StringVar(&f.prompt, "prompt", "", "with --session, the prompt passed as FLOWGATE_PROMPT")
	fl.StringVar(&f.resumePrompt, "resume-prompt", "", "with --session, the prompt passed instead when continuing an interrupted run")
	fl.StringVar(&f.check, "session-check", "", "with --session, a shell command asked whether the session still exists (exit 0: alive; FLOWGATE_SESSION_ID set)")
	fl.BoolVar(&f.fresh, "new", false, "with --session, archive the lineage and its notes and start a new one")
}

// spec is the task's session, nil without --session.
func (f *sessionFlags) spec() (*sdk.SessionSpec, error) {
	if f.name == "" {
		for flag, v := range map[string]string{"--step": f.step, "--prompt": f.prompt, "--resume-prompt": f.resumePrompt, "--session-check": f.check} {
			if v != "" {
				return nil, usageError{fmt.Errorf("%s needs --session NAME", flag)}
			}
		}
		if f.fresh {
			return nil, usageError{errors.New("--new needs --session NAME: it archives that session's lineage")}
		}
		return nil, nil
	}
	if err := checkSessionName(f.name); err != nil {
		return nil, err
	}
	return &sdk.SessionSpec{Name: f.name, Step: f.step, Prompt: f.prompt, ResumePrompt: f.resumePrompt, Check: f.check}, nil
}

// startOver archives the lineage spec's session has in its workspace
// (--new), through the link's gateway.
func (e *env) startOver(ctx context.Context, l *link, spec sdk.TaskSpec) error {
	return l.retry(ctx, true, func(c api.Client) error {
		return e.archiveAnnounced(ctx, c, spec.Session.Name, spec.Cwd)
	})
}

// archiveAnnounced archives session name's lineage in workspace and says
// so on stderr when there was one.
func (e *env) archiveAnnounced(ctx context.Context, c api.Client, name, workspace string) error {
	archived, err := e.archiveSession(ctx, c, name, workspace)
	if err == nil && archived != nil {
		fmt.Fprintf(e.stderr, "Archived session %s in %s (%d wakes); starting a new one.\n", archived.Name, archived.Workspace, archived.Wakes)
	}
	return err
}

// pipelineSession checks pipeline run's --session and --new.
func pipelineSession(name string, startOver bool) error {
	if name == "" {
		if startOver {
			return usageError{errors.New("--new needs --session NAME: it archives that session's lineage")}
		}
		return nil
	}
	return checkSessionName(name)
}

// startPipelineOver archives session name's lineage in the current
// directory (pipeline run --new).
func (e *env) startPipelineOver(ctx context.Context, c api.Client, name string) error {
	ws, err := workspacePath("")
	if err != nil {
		return err
	}
	return e.archiveAnnounced(ctx, c, name, ws)
}
