package engine

import (
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// MaxAttempts bounds a retry policy's attempts, the first included.
const MaxAttempts = 100

// ValidateSpec refuses a task spec the runner could not run as asked. It
// is the one check of a spec, applied by CreateTask, so a task created
// from the CLI, the HTTP API or a controller is held to the same rules:
// exactly one of argv and shell, at most one of stdin and input, an
// absolute working directory, environment names that are not empty and
// hold no '=' or NUL, no negative duration, a session with a valid name
// and step and a working directory (its workspace), a retry policy of at most
// MaxAttempts attempts whose patterns compile, and a spec that fits a
// task record. Errors wrap sdk.ErrInvalid and name the field.
func ValidateSpec(s sdk.TaskSpec) error {
	if len(s.Argv) > 0 && s.Shell != "" {
		return invalid("a task runs either argv or a shell command line, not both")
	}
	if s.Stdin != "" && s.Input != "" {
		return invalid("a task reads stdin from a file or from input text, not both")
	}
	if len(s.Input) > maxInput {
		return invalid("input text is %d bytes; at most %d fit in a task record (pass a file with stdin instead)", len(s.Input), maxInput)
	}
	if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
		return invalid("cwd %q is relative; give an absolute directory", s.Cwd)
	}
	if s.Stdin != "" && !filepath.IsAbs(s.Stdin) {
		return invalid("stdin %q is relative; give an absolute file path", s.Stdin)
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return invalid("env name %q is not a variable name: it must be non-empty and hold no '=' or NUL", k)
		}
		if strings.ContainsRune(s.Env[k], 0) {
			return invalid("env %s holds a NUL byte, which no process environment can carry", k)
		}
	}
	for name, d := range map[string]sdk.Duration{"timeout": s.Timeout, "max_budget": s.MaxBudget, "no_progress_budget": s.NoProgressBudget} {
		if d < 0 {
			return invalid("%s must not be negative (got %s)", name, time.Duration(d))
		}
	}
	if s.On != "" && strings.ContainsAny(s.On, " \t\n,") {
		return invalid("on %q is not a label: a label is one word without spaces or commas, such as gpu or zone=eu", s.On)
	}
	if err := validateRetry(s.Retry); err != nil {
		return err
	}
	if err := validProbe(s.Probe); err != nil {
		return err
	}
	if err := ValidateNotify(s.OnFinish); err != nil {
		return err
	}
	if err := checkNotifySettings(s.NotifyPolicy, s.NotifyTo, s.NotifyTemplate); err != nil {
		return err
	}
	if err := checkMilestoneNames(s.NotifyOnMilestone); err != nil {
		return err
	}
	if s.OnNoProgress != "" && s.OnNoProgress != sdk.NoProgressStop && s.OnNoProgress != sdk.NoProgressKeep {
		return invalid("on_no_progress %q is unknown: use %q or %q", s.OnNoProgress, sdk.NoProgressStop, sdk.NoProgressKeep)
	}
	if err := validateSession(s); err != nil {
		return err
	}
	return checkSpecSize(s)
}

// validProbe checks a network probe endpoint; empty is none.
func validProbe(p string) error {
	if p == "" {
		return nil
	}
	if host, port, err := net.SplitHostPort(p); err != nil || host == "" || port == "" {
		return invalid("probe %q must be host:port, e.g. api.example.com:443", p)
	}
	return nil
}

// ValidateNotify checks where finish notifications go; nil is nowhere.
// The error (sdk.ErrInvalidInput) says what is wrong with it.
func ValidateNotify(n *sdk.FinishNotify) error {
	switch {
	case n == nil:
		return nil
	case strings.TrimSpace(n.Command) == "" && n.Webhook == "":
		return invalid("on_finish names neither a command nor a webhook; give one, or leave on_finish out")
	case n.Webhook == "":
		return nil
	}
	if u, err := url.Parse(n.Webhook); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("on_finish webhook %q is not an http or https URL", n.Webhook)
	}
	return nil
}

// validateRetry checks a retry policy; nil is no retry.
func validateRetry(r *sdk.RetryPolicy) error {
	if r == nil {
		return nil
	}
	if r.MaxAttempts < 0 || r.MaxAttempts > MaxAttempts {
		return invalid("retry max_attempts must be between 0 and %d (got %d)", MaxAttempts, r.MaxAttempts)
	}
	if r.Backoff < 0 || r.MaxBackoff < 0 {
		return invalid("retry backoff and max_backoff must not be negative (got %s and %s)", time.Duration(r.Backoff), time.Duration(r.MaxBackoff))
	}
	for kind, pats := range map[string][]string{"transient_patterns": r.TransientPatterns, "fatal_patterns": r.FatalPatterns} {
		for _, p := range pats {
			if _, err := regexp.Compile(p); err != nil {
				return invalid("retry %s: %q is not a regular expression (%v)", kind, p, err)
			}
		}
	}
	return nil
}
