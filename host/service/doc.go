// Package service installs the flowgate gateway as a service of the
// operating system: a systemd unit on Linux, a launchd property list on
// macOS.
//
// # What is installed
//
// Install returns a Plan: the file to write (the unit or plist, which
// runs "flowgate gateway --home H [--config C]") and the commands that
// load and start it. Uninstall returns the Plan that stops, unloads and
// removes it. A Plan is data until Apply runs it, so "--dry-run" prints
// exactly what would be done.
//
// # The service keeps the tasks alive
//
// The gateway is restarted when it fails (systemd Restart=on-failure,
// launchd KeepAlive with SuccessfulExit false). Stopping it never stops
// the tasks: each task runs under a shim in a session of its own, and the
// service manager is told to stop only the gateway process (systemd
// KillMode=process, launchd AbandonProcessGroup). The next gateway
// reattaches to the shims, as after a crash.
//
// # Scope
//
// With User, the service belongs to the current user: a systemd user unit
// under ~/.config/systemd/user, or a launchd agent under
// ~/Library/LaunchAgents. Without it, a system unit in /etc/systemd/system
// (run as the current user) or a launchd daemon in /Library/LaunchDaemons,
// which needs root to install.
package service
