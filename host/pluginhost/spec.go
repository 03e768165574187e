package pluginhost

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/filetrust"
)

// Spec names one controller plugin to run: an executable (Path, Args, Env),
// or, with Path empty, a first-party controller the flowgate executable
// serves itself (flowgate plugin serve NAME).
type Spec struct {
	Name string            `yaml:"name"`
	Path string            `yaml:"path"`
	Args []string          `yaml:"args"`
	Env  map[string]string `yaml:"env"`
	// Isolate runs a first-party controller (an entry with no Path) as a
	// plugin process, served by the flowgate executable, instead of
	// inside the gateway's process: a crash or a leak of the controller
	// then cannot take the gateway with it, at the cost of a process and
	// a gRPC round trip per call. An entry with a Path is always a
	// plugin process.
	Isolate bool `yaml:"isolate"`
	// SHA256, if set, is the hex SHA-256 the executable must have; it is
	// checked before every launch.
	SHA256 string `yaml:"sha256"`
	// OnFinish and OnFinishWebhook, if set, are where the finish
	// notification of every flow this controller drives goes when the
	// flow ends: a command run with the notice as JSON on stdin, a URL it
	// is POSTed to (see host/notify). They are recorded when the gateway
	// starts (engine.SetControllerNotices).
	OnFinish        string `yaml:"on_finish"`
	OnFinishWebhook string `yaml:"on_finish_webhook"`
	// Key is where the entry is in the gateway config ("plugins[1]", or
	// "plugins_dir" for a plugin found there); every error about the
	// entry names its field under it ("plugins[1].path"). If empty,
	// NewSupervisor and Check set plugins[i] from the entry's position.
	Key string `yaml:"-"`
}

// ConfigError is a mistake in a plugin's entry of the gateway config: a
// path that is not an executable, a sha256 the executable does not have,
// a name other than the one the plugin reports. Key names the field
// ("plugins[1].path"). It matches sdk.ErrInvalid under errors.Is, so the
// CLI exits 2 for it, as for any invalid input.
type ConfigError struct {
	Key string
	Err error
}

func (e *ConfigError) Error() string { return e.Key + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

// Is reports whether target is sdk.ErrInvalid.
func (e *ConfigError) Is(target error) bool { return target == sdk.ErrInvalid }

// keyed returns specs with every empty Key set to plugins[i].
func keyed(specs []Spec) []Spec {
	out := append([]Spec(nil), specs...)
	for i := range out {
		if out[i].Key == "" {
			out[i].Key = fmt.Sprintf("plugins[%d]", i)
		}
	}
	return out
}

// mistake is a ConfigError about field of s. A plugin found in
// plugins_dir has no fields of its own: the key is plugins_dir.
func (s Spec) mistake(field, format string, a ...any) error {
	key := s.Key + "." + field
	if s.Key == PluginsDirKey {
		key = PluginsDirKey
	}
	return &ConfigError{Key: key, Err: fmt.Errorf(format, a...)}
}

// namedTwice is the mistake of a spec whose name an earlier entry
// already has.
func (s Spec) namedTwice() error {
	return s.mistake("name", "%q names two plugins; give each its own name", s.Name)
}

// which names the plugin in a message, when it has a name.
func (s Spec) which() string {
	if s.Name == "" {
		return ""
	}
	return fmt.Sprintf(" (plugin %q)", s.Name)
}

// FinishNotify is where the finish notifications of the controller's
// flows go; nil when its entry names no on_finish.
func (s Spec) FinishNotify() *sdk.FinishNotify {
	if s.OnFinish == "" && s.OnFinishWebhook == "" {
		return nil
	}
	return &sdk.FinishNotify{Command: s.OnFinish, Webhook: s.OnFinishWebhook}
}

// Validate names the first field that is wrong.
func (s Spec) Validate() error {
	switch {
	case s.Name == "":
		return s.mistake("name", "is required: it is the controller id flows are created with, and must be what the plugin reports as its name (Info().Name)")
	case s.SHA256 != "" && len(s.SHA256) != 64:
		return s.mistake("sha256", "want 64 hex digits, got %d characters", len(s.SHA256))
	}
	if s.SHA256 != "" {
		if _, err := hex.DecodeString(s.SHA256); err != nil {
			return s.mistake("sha256", "not hex: %v", err)
		}
	}
	if err := engine.ValidateNotify(s.FinishNotify()); err != nil {
		return s.mistake("on_finish", "%v", err)
	}
	return nil
}

// checkFile reports an entry whose executable cannot be launched as
// configured: Path missing, a directory, not executable, or with a
// SHA-256 other than SHA256. A bare name is looked up in PATH, as exec
// does. An empty Path (a first-party plugin) passes.
func (s Spec) checkFile() error {
	if s.Path == "" {
		return nil
	}
	path := s.Path
	if !strings.Contains(path, "/") {
		found, err := exec.LookPath(path)
		if err != nil {
			return s.mistake("path", "no executable %q on PATH%s; give the plugin's full path", s.Path, s.which())
		}
		path = found
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s.mistake("path", "%s does not exist%s; build or install the plugin there, or fix the path", path, s.which())
	case err != nil:
		return s.mistake("path", "%w", err)
	case fi.IsDir():
		return s.mistake("path", "%s is a directory%s; point path at the plugin's executable", path, s.which())
	case fi.Mode().Perm()&0o111 == 0:
		return s.mistake("path", "%s is not executable%s (mode %s); chmod +x it", path, s.which(), fi.Mode().Perm())
	}
	if err := s.checkOwner(path); err != nil {
		return err
	}
	return s.checkSum(path)
}

// checkOwner refuses the executable at path when someone other than the
// gateway's user or root could change it (filetrust.Runnable): the plugin runs
// with the gateway's rights.
func (s Spec) checkOwner(path string) error {
	if err := filetrust.Runnable(path); err != nil {
		return s.mistake("path", "refused to run%s: %w", s.which(), err)
	}
	return nil
}

// checkSum reports an executable at path whose SHA-256 is not SHA256.
func (s Spec) checkSum(path string) error {
	if s.SHA256 == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return s.mistake("path", "%w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return s.mistake("path", "read %s to check its sha256: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, s.SHA256) {
		return s.mistake("sha256", "%s has the sha256 %s, not the configured %s%s; reinstall the plugin the config pins, or, if you rebuilt it on purpose, set sha256: %s", path, got, s.SHA256, s.which(), got)
	}
	return nil
}
