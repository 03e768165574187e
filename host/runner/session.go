package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/shell"
	"github.com/flowgate/flowgate/host/stored"
)

// sessionCheckTimeout bounds one run of a session's Check command; one
// that takes longer counts as "gone". The check runs as the attempt
// launches, holding up the launches after it, so it must be quick.
const sessionCheckTimeout = 10 * time.Second

// beginSession decides whether the attempt now starting continues its
// step's session, and records it (see engine.BeginSession). A session is
// continued when the lineage of the task's name and workspace names one
// for the step, the step is not Fresh, and the Check command (if any)
// says it is still alive; anything else, including a lineage that cannot
// be read, starts fresh, silently.
func (r *Runner) beginSession(ctx context.Context, task *stored.Task) (*stored.Task, error) {
	ss := task.Spec.Session
	in := engine.SessionStart{WorkspaceID: workspaceID(task.Spec.Cwd)}
	if l, err := r.eng.Lineage(ss.Name, task.Spec.Cwd); err == nil && l != nil && !ss.Fresh && l.WorkspaceID == in.WorkspaceID {
		if id := l.Steps[ss.StepName()].SessionID; id != "" && r.sessionAlive(ctx, task, id) {
			in.Resume = id
		}
	}
	next, err := r.eng.BeginSession(task.ID, in)
	if err != nil {
		return nil, err
	}
	if s := next.Session; s.Banner != "" {
		r.log.Info(s.Banner, "task", task.ID)
	}
	return next, nil
}

// workspaceID is the identity of the directory at path: its device and
// inode, so that a copy, or another directory moved to the same path,
// differs. It is empty when path cannot be read.
func workspaceID(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

// sessionAlive runs the task's session Check, when set, to ask whether
// session id still exists: exit status 0 says it does. The check runs in
// the workspace with shell.BaseEnv, the task's Env (not its held secrets),
// FLOWGATE_SESSION and FLOWGATE_SESSION_ID.
func (r *Runner) sessionAlive(ctx context.Context, task *stored.Task, id string) bool {
	ss := task.Spec.Session
	if ss.Check == "" {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, sessionCheckTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", ss.Check)
	cmd.Dir = task.Spec.Cwd
	cmd.Env = shell.BaseEnv(os.Environ())
	for _, k := range slices.Sorted(maps.Keys(task.Spec.Env)) {
		cmd.Env = append(cmd.Env, k+"="+task.Spec.Env[k])
	}
	cmd.Env = append(cmd.Env, "FLOWGATE_SESSION="+ss.Name, "FLOWGATE_SESSION_ID="+id)
	err := cmd.Run()
	if err != nil {
		r.log.Info("session check says the session is gone; starting fresh", "session", ss.Name, "session_id", id, "error", err)
	}
	return err == nil
}

// sessionEnv adds the session variables to env, a copy of the task's own:
// FLOWGATE_SESSION and FLOWGATE_SESSION_DIR (a directory under the home
// kept from run to run, for the agent's notes) always; FLOWGATE_SESSION_ID
// and FLOWGATE_RESUME=1 when the task continues a session; and
// FLOWGATE_PROMPT, the resume prompt when the continued run had been
// interrupted and the prompt otherwise. No error details of the
// interrupted run are passed.
func (r *Runner) sessionEnv(task *stored.Task, env map[string]string) (map[string]string, error) {
	ss := task.Spec.Session
	env = maps.Clone(env)
	if env == nil {
		env = map[string]string{}
	}
	env["FLOWGATE_SESSION"] = ss.Name
	if _, ok := env["FLOWGATE_SESSION_DIR"]; !ok {
		dir := filepath.Join(r.cfg.Home, home.SessionsDir, ss.Name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("session %s: %w", ss.Name, err)
		}
		env["FLOWGATE_SESSION_DIR"] = dir
	}
	prompt := ss.Prompt
	if s := task.Session; s != nil && s.Resumed {
		env["FLOWGATE_SESSION_ID"] = s.ID
		env["FLOWGATE_RESUME"] = "1"
		if s.Interrupted && ss.ResumePrompt != "" {
			prompt = ss.ResumePrompt
		}
	}
	if prompt != "" {
		env["FLOWGATE_PROMPT"] = prompt
	}
	return env, nil
}
