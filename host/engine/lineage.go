package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"unicode"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Lineage records live under lineage/<name>/<workspace digest>; archived
// ones under lineage-archive/<name>/<workspace digest>/<time>. Neither is
// indexed: a lineage is found by its name and workspace.
const (
	lineagePrefix        = "lineage/"
	lineageArchivePrefix = "lineage-archive/"
)

// sessionName is what a session (and step) name may be.
var sessionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// maxStepName bounds a session step's name (a pipeline's step id).
const maxStepName = 256

// ValidSessionName reports whether name may name a session or a step.
func ValidSessionName(name string) bool { return sessionName.MatchString(name) }

// validateSession checks s.Session; nil is no session.
func validateSession(s sdk.TaskSpec) error {
	ss := s.Session
	if ss == nil {
		return nil
	}
	if !ValidSessionName(ss.Name) {
		return invalid("session name %q is not a name: use letters, digits, '.', '_' or '-', at most 64", ss.Name)
	}
	if len(ss.Step) > maxStepName || strings.IndexFunc(ss.Step, unicode.IsControl) >= 0 {
		return invalid("session step %q must be at most %d bytes with no control characters", ss.Step, maxStepName)
	}
	if s.Cwd == "" {
		return invalid("a task with session %s needs a cwd: the workspace its lineage belongs to", ss.Name)
	}
	return nil
}

// workspaceDigest keys a workspace path.
func workspaceDigest(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return hex.EncodeToString(sum[:8])
}

func lineageKey(name, workspace string) string {
	return lineagePrefix + name + "/" + workspaceDigest(workspace)
}

// loadLineage reads the lineage at key; a missing or unreadable record is
// absent (nil, nil): a damaged lineage is started over, never an error.
func loadLineage(tx store.ReadTx, key string) (*sdk.Lineage, error) {
	l, err := getRecord[sdk.Lineage](tx, key)
	if errors.Is(err, store.ErrKeyNotFound) || damaged(err) != nil {
		return nil, nil
	}
	return l, err
}

// Lineage returns the live lineage of session name in workspace; nil
// when there is none or its record cannot be read.
func (e *Engine) Lineage(name, workspace string) (*sdk.Lineage, error) {
	var out *sdk.Lineage
	err := e.view(func(tx store.ReadTx) error {
		var err error
		out, err = loadLineage(tx, lineageKey(name, workspace))
		return err
	})
	return out, err
}

// Lineages lists the lineages of session name (every session when name is
// empty), the live ones first, then the archived ones when archived is
// set, each group in key order. Unreadable records are skipped.
func (e *Engine) Lineages(name string, archived bool) ([]sdk.Lineage, error) {
	var out []sdk.Lineage
	prefixes := []string{lineagePrefix, lineageArchivePrefix}
	if !archived {
		prefixes = prefixes[:1]
	}
	err := e.view(func(tx store.ReadTx) error {
		for _, p := range prefixes {
			if name != "" {
				p += name + "/"
			}
			var derr error
			err := tx.Scan(p, store.ScanOptions{}, func(it store.Item) bool {
				l, err := decodeRecord[sdk.Lineage](it)
				if err == nil {
					out = append(out, *l)
				} else if damaged(err) == nil {
					derr = err
				}
				return derr == nil
			})
			if err == nil {
				err = derr
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// ArchiveLineage moves the live lineage of session name in workspace under
// lineage-archive/ (never deleting it) and returns it as archived; the
// next run starts a new lineage with no steps and no wakes. It returns
// nil, and no error, when there is no live lineage.
func (e *Engine) ArchiveLineage(name, workspace string) (*sdk.Lineage, error) {
	var out *sdk.Lineage
	err := e.write(func(t *txn) error {
		var err error
		out, err = t.archiveLineage(lineageKey(name, workspace))
		return err
	})
	return out, err
}

// archiveLineage moves the record at key (readable or not) to the archive.
func (t *txn) archiveLineage(key string) (*sdk.Lineage, error) {
	it, err := t.tx.Get(key)
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dest := lineageArchivePrefix + strings.TrimPrefix(key, lineagePrefix) + "/" + timeKey(t.now)
	l, derr := decodeRecord[sdk.Lineage](it)
	if derr != nil {
		if err := t.putRaw(dest, it.Value); err != nil {
			return nil, err
		}
		return nil, t.del(key)
	}
	l.ArchivedAt = t.now
	if err := t.put(dest, l); err != nil {
		return nil, err
	}
	return l, t.del(key)
}

// SessionStart is what the runner found for a task's session before its
// attempt starts.
type SessionStart struct {
	// WorkspaceID is the identity of the workspace directory now.
	WorkspaceID string
	// Resume is the session to continue; empty starts a fresh one. The
	// runner leaves it empty when the session check said it is gone.
	Resume string
}

// BeginSession records that task id's attempt starts its session: it
// continues in.Resume when that is still the step's session in a lineage
// whose workspace identity matches (waking the lineage once more and
// writing the banner), and starts fresh otherwise. A lineage that belongs
// to another directory at the same path is archived first. The task's
// Session tells the runner which it was.
func (e *Engine) BeginSession(id string, in SessionStart) (*stored.Task, error) {
	return e.changeTask(id, func(t *txn, task *stored.Task) error {
		ss := task.Spec.Session
		if ss == nil {
			return invalid("task %s has no session", id)
		}
		key := lineageKey(ss.Name, task.Spec.Cwd)
		l, err := loadLineage(t.tx, key)
		if err != nil {
			return err
		}
		if l != nil && l.WorkspaceID != in.WorkspaceID {
			if _, err := t.archiveLineage(key); err != nil {
				return err
			}
			l = nil
		}
		if l == nil {
			l = &sdk.Lineage{Name: ss.Name, Workspace: task.Spec.Cwd, WorkspaceID: in.WorkspaceID, CreatedAt: t.now}
		}
		l.Steps = maps.Clone(l.Steps)
		if l.Steps == nil {
			l.Steps = map[string]sdk.LineageStep{}
		}
		step := ss.StepName()
		prev := l.Steps[step]
		s := &sdk.TaskSession{}
		if in.Resume != "" && !ss.Fresh && prev.SessionID == in.Resume {
			l.Wakes++
			s.ID, s.Resumed, s.Wake, s.ContextTokens = prev.SessionID, true, l.Wakes, prev.ContextTokens
			s.Interrupted = prev.TaskID == id || !succeeded(t.tx, prev.TaskID)
			s.Banner = wakeBanner(l, step, s)
			l.Banner = s.Banner
			l.Steps[step] = sdk.LineageStep{SessionID: prev.SessionID, TaskID: id, ContextTokens: prev.ContextTokens, UpdatedAt: t.now}
		} else {
			l.Steps[step] = sdk.LineageStep{TaskID: id, UpdatedAt: t.now}
		}
		l.UpdatedAt = t.now
		task.Session = s
		return t.put(key, l)
	})
}

// succeeded reports whether task id exists and succeeded.
func succeeded(tx store.ReadTx, id string) bool {
	task, err := loadTask(tx, id)
	return err == nil && task.Status == sdk.TaskSucceeded
}

// wakeBanner is the one line a continued run starts with.
func wakeBanner(l *sdk.Lineage, step string, s *sdk.TaskSession) string {
	b := fmt.Sprintf("flowgate: waking session %s in %s (wake %d): step %s continues %s", l.Name, l.Workspace, s.Wake, step, s.ID)
	if s.Interrupted {
		b += " after an interrupted run"
	}
	if s.ContextTokens > 0 {
		b += fmt.Sprintf(", context %d tokens", s.ContextTokens)
	}
	return b
}

// recordSession stores the session the task reported in its lineage step,
// in the transaction that records the progress line, so the id is durable
// before the next line is read.
func (t *txn) recordSession(task *stored.Task, rep *SessionReport) error {
	s := sdk.TaskSession{}
	if task.Session != nil {
		s = *task.Session
	}
	if rep.ID != "" {
		s.ID = rep.ID
	}
	if rep.ContextTokens > 0 {
		s.ContextTokens = rep.ContextTokens
	}
	task.Session = &s
	ss := task.Spec.Session
	if ss == nil || s.ID == "" {
		return nil
	}
	key := lineageKey(ss.Name, task.Spec.Cwd)
	l, err := loadLineage(t.tx, key)
	if err != nil || l == nil {
		return err // the lineage was archived meanwhile: the task keeps its id
	}
	step := ss.StepName()
	if cur := l.Steps[step]; cur.TaskID != task.ID {
		return nil // a later run owns the step now
	}
	l.Steps = maps.Clone(l.Steps)
	l.Steps[step] = sdk.LineageStep{SessionID: s.ID, TaskID: task.ID, ContextTokens: s.ContextTokens, UpdatedAt: t.now}
	l.UpdatedAt = t.now
	return t.put(key, l)
}
