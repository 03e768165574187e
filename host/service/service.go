package service

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Config says what to install.
type Config struct {
	// OS is "linux" (systemd) or "darwin" (launchd); any other is refused.
	OS string
	// Exe is the absolute path of the flowgate binary the service runs.
	Exe string
	// Home is the gateway's home directory, an absolute path.
	Home string
	// Config is the gateway config file, an absolute path; empty means none.
	Config string
	// User installs a per-user service (see the package doc); false a
	// system one.
	User bool
	// UserHome is the current user's home directory, where per-user
	// services live.
	UserHome string
	// UserName and UID are the current user's, which a system service
	// runs as and a launchd agent is loaded for.
	UserName string
	UID      int
}

// Name is the systemd unit's name and the launchd job's label.
const (
	UnitName = "flowgate.service"
	Label    = "io.flowgate.gateway"
)

// Validate names the first field that cannot make a service.
func (c Config) Validate() error {
	switch {
	case c.OS != "linux" && c.OS != "darwin":
		return fmt.Errorf("a service can be installed on Linux (systemd) and macOS (launchd), not on %s; run the gateway in the foreground with flowgate gateway (on Windows, use WSL)", c.OS)
	case !filepath.IsAbs(c.Exe):
		return fmt.Errorf("the flowgate binary path %q is not absolute; run the installed flowgate binary by its full path", c.Exe)
	case !filepath.IsAbs(c.Home):
		return fmt.Errorf("the home %q is not absolute; pass --home with a full path", c.Home)
	case c.Config != "" && !filepath.IsAbs(c.Config):
		return fmt.Errorf("the config file %q is not absolute; pass --config with a full path", c.Config)
	case c.User && !filepath.IsAbs(c.UserHome):
		return errors.New("cannot tell your home directory, where a --user service lives; set $HOME")
	}
	return nil
}

// argv is the command the service runs.
func (c Config) argv() []string {
	a := []string{c.Exe, "gateway", "--home", c.Home}
	if c.Config != "" {
		a = append(a, "--config", c.Config)
	}
	return a
}

// Plan is what installing or uninstalling does, in order: run Before,
// write or remove the file at Path, run After.
type Plan struct {
	Before [][]string
	// Path is the unit or plist file.
	Path string
	// Content is what Path gets; empty means Path is removed.
	Content string
	After   [][]string
}

// String lists the plan's steps, one a line, as --dry-run shows them.
func (p Plan) String() string {
	var b strings.Builder
	for _, c := range p.Before {
		fmt.Fprintf(&b, "run: %s\n", strings.Join(c, " "))
	}
	if p.Content != "" {
		fmt.Fprintf(&b, "write %s:\n%s", p.Path, p.Content)
	} else {
		fmt.Fprintf(&b, "remove %s\n", p.Path)
	}
	for _, c := range p.After {
		fmt.Fprintf(&b, "run: %s\n", strings.Join(c, " "))
	}
	return b.String()
}

// Apply carries the plan out, running each command with run, and stops
// at the first step that fails. Removing a file that is not there is not
// a failure.
func (p Plan) Apply(run func(argv []string) error) error {
	for _, c := range p.Before {
		if err := run(c); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(c, " "), err)
		}
	}
	if p.Content != "" {
		if err := os.MkdirAll(filepath.Dir(p.Path), 0o755); err != nil {
			return fmt.Errorf("create the directory of %s: %w", p.Path, err)
		}
		if err := os.WriteFile(p.Path, []byte(p.Content), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p.Path, err)
		}
	} else if err := os.Remove(p.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p.Path, err)
	}
	for _, c := range p.After {
		if err := run(c); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(c, " "), err)
		}
	}
	return nil
}

// Install returns the plan that writes the service file, loads it and
// starts the gateway, now and at every boot or login.
func Install(c Config) (Plan, error) {
	if err := c.Validate(); err != nil {
		return Plan{}, err
	}
	if c.OS == "darwin" {
		path := plistPath(c)
		return Plan{Path: path, Content: Plist(c), After: [][]string{{"launchctl", "bootstrap", launchDomain(c), path}}}, nil
	}
	sc := systemctl(c)
	return Plan{Path: unitPath(c), Content: Unit(c), After: [][]string{
		append(sc, "daemon-reload"),
		append(sc, "enable", "--now", UnitName),
	}}, nil
}

// Uninstall returns the plan that stops the gateway (never its tasks),
// unloads the service and removes its file.
func Uninstall(c Config) (Plan, error) {
	if err := c.Validate(); err != nil {
		return Plan{}, err
	}
	if c.OS == "darwin" {
		path := plistPath(c)
		return Plan{Before: [][]string{{"launchctl", "bootout", launchDomain(c), path}}, Path: path}, nil
	}
	sc := systemctl(c)
	return Plan{
		Before: [][]string{append(sc, "disable", "--now", UnitName)},
		Path:   unitPath(c),
		After:  [][]string{append(sc, "daemon-reload")},
	}, nil
}
