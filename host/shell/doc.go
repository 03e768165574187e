// Package shell runs the gateway's own command lines: the diagnoser, the
// notify commands of cron jobs. Tasks do not run here; their shim runs
// them (host/runner/shim).
//
// # Environment
//
// BaseEnv is the one rule for what of the gateway's environment reaches a
// task or one of these commands: PATH, HOME, LANG, TZ, USER and
// FLOWGATE_HOME, never a credential of the gateway's. Command starts
// every command line with it.
//
// # Process groups
//
// Command runs a line with /bin/sh -c in a process group of its own, so
// that stopping it (its context ended) kills everything the line
// started, not only the shell: a pipeline or a background job left
// running would otherwise hold its output open and outlive the gateway's
// wait.
package shell
