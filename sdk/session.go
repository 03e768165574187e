package sdk

import "time"

// SessionSpec ties a task to a named agent session lineage: the
// conversation an agent command-line tool keeps across runs. The task
// reports its agent's session id on its progress channel
// ({"session_id":"…"}); the next run of the same step in the same
// workspace continues that session (FLOWGATE_SESSION_ID and
// FLOWGATE_RESUME=1 in its environment) instead of starting over.
type SessionSpec struct {
	// Name names the lineage; with the task's Cwd (its workspace) it
	// picks the lineage record. Letters, digits, '.', '_' and '-'.
	Name string `json:"name"`
	// Step names the task's step in the lineage; empty means "main".
	Step string `json:"step,omitempty"`
	// Prompt is passed as FLOWGATE_PROMPT when the task does not continue
	// an interrupted session; empty means none is passed.
	Prompt string `json:"prompt,omitempty"`
	// ResumePrompt replaces Prompt (and is passed as FLOWGATE_PROMPT) when
	// the task continues a session whose last run did not succeed; empty
	// means Prompt is passed then too.
	ResumePrompt string `json:"resume_prompt,omitempty"`
	// Fresh makes the step start a new session every time (verifiers,
	// judges): it never continues one.
	Fresh bool `json:"fresh,omitempty"`
	// Check is a shell command asked whether the session still exists
	// before it is continued (run in the workspace with the task's Env and
	// FLOWGATE_SESSION_ID): exit 0 means alive, anything else (or taking
	// over 10 s) means gone, and the task starts fresh. Empty means every
	// recorded session is alive.
	Check string `json:"check,omitempty"`
}

// StepName is the step the task occupies in its lineage.
func (s *SessionSpec) StepName() string {
	if s.Step == "" {
		return "main"
	}
	return s.Step
}

// TaskSession is what a task's session turned out to be, recorded on the
// task.
type TaskSession struct {
	// ID is the agent's session id: the one continued, or the one the task
	// reported. Empty while neither is known.
	ID string `json:"id,omitempty"`
	// Resumed says the task continued the session ID.
	Resumed bool `json:"resumed,omitempty"`
	// Interrupted says the continued session's last run had not
	// succeeded, so the task got the resume prompt.
	Interrupted bool `json:"interrupted,omitempty"`
	// Wake is the lineage's wake count once this task continued it; zero
	// for a fresh start.
	Wake int `json:"wake,omitempty"`
	// Banner is the one-line wake banner of a continued run.
	Banner string `json:"banner,omitempty"`
	// ContextTokens is the context size the agent reported last, from a
	// progress line's "context_tokens"; zero when none was reported.
	ContextTokens int64 `json:"context_tokens,omitempty"`
}

// Lineage is the record of one named session in one workspace: which
// agent session each step continues, and how often the lineage woke.
type Lineage struct {
	Name string `json:"name"`
	// Workspace is the absolute path the lineage belongs to, and
	// WorkspaceID the identity (device and inode) of the directory there
	// when the lineage began: a copied or moved workspace, or another
	// directory put in its place, does not inherit the lineage.
	Workspace   string `json:"workspace"`
	WorkspaceID string `json:"workspace_id,omitempty"`
	// Wakes counts the runs that continued a session of the lineage.
	Wakes int `json:"wakes"`
	// Steps maps a step name to the session it continues.
	Steps map[string]LineageStep `json:"steps,omitempty"`
	// Banner is the latest wake banner.
	Banner    string    `json:"banner,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// ArchivedAt is when the lineage was archived; zero for the live one.
	ArchivedAt time.Time `json:"archived_at,omitzero"`
}

// LineageStep is one step of a lineage.
type LineageStep struct {
	// SessionID is the agent's session id; empty until the step's task
	// reports one.
	SessionID string `json:"session_id,omitempty"`
	// TaskID is the task that ran the step last.
	TaskID        string    `json:"task_id,omitempty"`
	ContextTokens int64     `json:"context_tokens,omitempty"`
	UpdatedAt     time.Time `json:"updated_at"`
}
