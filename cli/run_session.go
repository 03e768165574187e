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

// pipelineSessionFlags are the --session flags of pipeline run.
type pipelineSessionFlags struct {
	name, check string
	startOver   bool // --new
}

func (f *pipelineSessionFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.name, "session", "", "continue the agent session lineage NAME in each step's working directory")
	fl.StringVar(&f.check, "session-check", "", "with --session, a shell command asked whether a step's session still exists (exit 0: alive; FLOWGATE_SESSION_ID set)")
	fl.BoolVar(&f.startOver, "new", false, "with --session, archive the lineage of the current directory and its notes first")
}

// validate refuses --new or --session-check without --session, and a name
// no session can have.
func (f *pipelineSessionFlags) validate() error {
	if f.name != "" {
		return checkSessionName(f.name)
	}
	if f.startOver {
		return usageError{errors.New("--new needs --session NAME: it archives that session's lineage")}
	}
	if f.check != "" {
		return usageError{errors.New("--session-check needs --session NAME")}
	}
	return nil
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
