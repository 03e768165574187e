package shim

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowgate/flowgate/sdk/duration"
)

// DefaultGrace is how long the shim waits between SIGTERM and SIGKILL
// when a Spec leaves Grace zero.
const DefaultGrace = 5 * time.Second

// Spec is what one attempt runs and under which limits. The gateway
// hands it to the shim on a pipe (SpecEntry, Launch); the shim only
// reads it.
type Spec struct {
	// TaskID, FlowID and Attempt identify the attempt. They reach the
	// child as FLOWGATE_TASK_ID, FLOWGATE_FLOW_ID and FLOWGATE_ATTEMPT.
	TaskID  string `json:"task_id"`
	FlowID  string `json:"flow_id"`
	Attempt int    `json:"attempt"`
	// Argv is the program and its arguments. A program name without a
	// slash is looked up in the child's PATH (Env may change it); a
	// relative path is taken relative to Cwd. Exactly one of Argv and
	// Shell is set.
	Argv []string `json:"argv,omitempty"`
	// Shell is a command line run by /bin/sh -c.
	Shell string `json:"shell,omitempty"`
	// Env is added to the environment the shim was started with; it
	// overrides variables of the same name but not the FLOWGATE_*
	// variables. Secrets never go here: a spec may be written to a file
	// (WriteSpec).
	Env map[string]string `json:"env,omitempty"`
	// Cwd is the child's absolute working directory; empty means the
	// shim's own.
	Cwd string `json:"cwd,omitempty"`
	// StdinPath is an absolute path to a file fed to the child as its
	// stdin; empty means /dev/null.
	StdinPath string `json:"stdin_path,omitempty"`
	// ProgressPath is the absolute path of the task's progress file. It
	// reaches the child as FLOWGATE_PROGRESS and is what NoProgress
	// watches. Empty means the task has none.
	ProgressPath string `json:"progress_path,omitempty"`
	// Timeout is the wall-clock limit of this attempt, measured from the
	// child's start; zero means none.
	Timeout duration.Duration `json:"timeout,omitempty"`
	// Deadline is the absolute time at which the task's max budget runs
	// out; zero means none. A deadline already past when the shim starts
	// keeps the child from starting at all.
	Deadline time.Time `json:"deadline,omitzero"`
	// NoProgress stops a child whose progress file grew once during this
	// attempt and then stopped growing for this long; zero means never.
	// It needs ProgressPath.
	NoProgress duration.Duration `json:"no_progress,omitempty"`
	// KeepOnNoProgress leaves the child running when NoProgress runs
	// out: the shim writes GiveUpFile instead of stopping it.
	KeepOnNoProgress bool `json:"keep_on_no_progress,omitempty"`
	// Grace is how long a child gets between SIGTERM and SIGKILL; zero
	// means DefaultGrace.
	Grace duration.Duration `json:"grace,omitempty"`
	// Boot is the boot (BootID) the gateway recorded with the attempt's
	// start, or empty. A shim that runs in that boot claims the attempt
	// without syncing the claim: the gateway takes an attempt of an
	// earlier boot that shows no claim for one that may have run (see
	// the runner's recovery), so only a claim that may be read in a
	// later boot needs to be on disk before the child starts.
	Boot string `json:"boot,omitempty"`
}

// claimSynced reports whether the claim of s's attempt must be synced
// before its child starts: unless its start was recorded in this boot,
// a claim lost with the page cache would let a gateway take an attempt
// that ran for one that did not, and run it again.
func (s Spec) claimSynced() bool { return s.Boot == "" || s.Boot != BootID() }

// WithDefaults returns s with zero fields that have a default filled in.
func (s Spec) WithDefaults() Spec {
	if s.Grace == 0 {
		s.Grace = duration.Duration(DefaultGrace)
	}
	return s
}

// Validate returns an error naming the first field that holds an
// impossible value, or nil.
func (s Spec) Validate() error {
	switch {
	case len(s.Argv) > 0 && s.Shell != "":
		return errors.New("spec: argv and shell are both set; set exactly one")
	case len(s.Argv) == 0 && s.Shell == "":
		return errors.New("spec: neither argv nor shell is set; set exactly one")
	case len(s.Argv) > 0 && s.Argv[0] == "":
		return errors.New("spec: argv[0] is empty; it must name the program")
	case s.Timeout < 0, s.NoProgress < 0, s.Grace < 0:
		return fmt.Errorf("spec: timeout, no_progress and grace must not be negative (got %s, %s, %s)",
			time.Duration(s.Timeout), time.Duration(s.NoProgress), time.Duration(s.Grace))
	case s.NoProgress > 0 && s.ProgressPath == "":
		return errors.New("spec: no_progress is set but progress_path is empty; there is nothing to watch")
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("spec: env name %q is empty or holds '=' or NUL", k)
		}
	}
	for _, p := range []struct{ name, path string }{
		{"cwd", s.Cwd}, {"stdin_path", s.StdinPath}, {"progress_path", s.ProgressPath},
	} {
		if p.path != "" && !filepath.IsAbs(p.path) {
			return fmt.Errorf("spec: %s %q is not an absolute path", p.name, p.path)
		}
	}
	return nil
}

// WriteSpec validates s and writes it atomically as dir/spec.json, which
// a shim reads when its stdin is not a pipe (started by hand, or by a
// gateway from before the pipe; the gateway hands the spec over with
// SpecEntry and Launch). It returns the validation error, or an error
// naming the file when it cannot be written.
func WriteSpec(dir string, s Spec) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return WriteJSONAtomic(filepath.Join(dir, SpecFile), s)
}

// ReadSpec reads and validates dir/spec.json. A missing file gives an
// error that matches fs.ErrNotExist; every error names the file.
func ReadSpec(dir string) (Spec, error) {
	path := filepath.Join(dir, SpecFile)
	var s Spec
	if err := readJSON(path, &s); err != nil {
		return Spec{}, err
	}
	if err := s.Validate(); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
