package service

import (
	"fmt"
	"path/filepath"
	"strings"
)

// unitPath is where the systemd unit goes.
func unitPath(c Config) string {
	if c.User {
		return filepath.Join(c.UserHome, ".config", "systemd", "user", UnitName)
	}
	return filepath.Join("/etc/systemd/system", UnitName)
}

// systemctl is the systemctl command for the unit's scope.
func systemctl(c Config) []string {
	if c.User {
		return []string{"systemctl", "--user"}
	}
	return []string{"systemctl"}
}

// Unit returns the systemd unit that runs the gateway of c. It restarts
// the gateway when it fails and, with KillMode=process, stops only the
// gateway: the shims of running tasks, left in the unit's cgroup, keep
// running and the next gateway reattaches to them.
func Unit(c Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Unit]\nDescription=flowgate gateway for %s\nDocumentation=https://github.com/flowgate/flowgate\nAfter=network.target\n\n", systemdEscape(c.Home))
	b.WriteString("[Service]\nType=simple\n")
	if !c.User && c.UserName != "" {
		fmt.Fprintf(&b, "User=%s\n", c.UserName)
	}
	fmt.Fprintf(&b, "Environment=%s\n", systemdQuote("FLOWGATE_HOME="+c.Home))
	args := make([]string, 0, 6)
	for _, a := range c.argv() {
		args = append(args, systemdQuote(a))
	}
	fmt.Fprintf(&b, "ExecStart=%s\n", strings.Join(args, " "))
	b.WriteString("Restart=on-failure\nRestartSec=2s\n")
	b.WriteString("# Stop the gateway only: tasks run under shims that must outlive it.\nKillMode=process\nKillSignal=SIGTERM\nTimeoutStopSec=60s\n\n")
	target := "multi-user.target"
	if c.User {
		target = "default.target"
	}
	fmt.Fprintf(&b, "[Install]\nWantedBy=%s\n", target)
	return b.String()
}

// systemdQuote quotes one word of a unit's command line or assignment:
// double quotes, C-style escapes for '"' and '\', and %% and $$ so that
// systemd expands neither specifiers nor variables.
func systemdQuote(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(systemdEscape(s))
	return `"` + strings.ReplaceAll(s, "$", "$$") + `"`
}

// systemdEscape keeps systemd from reading a '%' in s as a specifier.
func systemdEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }
