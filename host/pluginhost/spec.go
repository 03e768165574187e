package pluginhost

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// Spec names one controller plugin to run: an executable (Path, Args, Env),
// or, with Path empty, a first-party controller the flowgate executable
// serves itself (flowgate plugin serve NAME).
type Spec struct {
	Name string            `yaml:"name"`
	Path string            `yaml:"path"`
	Args []string          `yaml:"args"`
	Env  map[string]string `yaml:"env"`
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
		return errors.New("plugins: an entry has no name")
	case s.SHA256 != "" && len(s.SHA256) != 64:
		return fmt.Errorf("plugins.%s.sha256: want 64 hex digits, got %d characters", s.Name, len(s.SHA256))
	}
	if s.SHA256 != "" {
		if _, err := hex.DecodeString(s.SHA256); err != nil {
			return fmt.Errorf("plugins.%s.sha256: not hex: %v", s.Name, err)
		}
	}
	if err := engine.ValidateNotify(s.FinishNotify()); err != nil {
		return fmt.Errorf("plugins.%s: %w", s.Name, err)
	}
	return nil
}

// checkPath reports a Path that cannot be launched: missing, a directory,
// or not executable. A bare name is looked up in PATH, as exec does. An
// empty Path (a first-party plugin) passes.
func (s Spec) checkPath() error {
	if s.Path == "" {
		return nil
	}
	if !strings.Contains(s.Path, "/") {
		if _, err := exec.LookPath(s.Path); err != nil {
			return fmt.Errorf("plugins.%s.path: no executable %q on PATH; give the plugin's full path", s.Name, s.Path)
		}
		return nil
	}
	fi, err := os.Stat(s.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("plugins.%s.path: %s does not exist; build or install the plugin there, or fix the path", s.Name, s.Path)
	case err != nil:
		return fmt.Errorf("plugins.%s.path: %w", s.Name, err)
	case fi.IsDir():
		return fmt.Errorf("plugins.%s.path: %s is a directory; point path at the plugin's executable", s.Name, s.Path)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("plugins.%s.path: %s is not executable (mode %s); chmod +x it", s.Name, s.Path, fi.Mode().Perm())
	}
	return nil
}
