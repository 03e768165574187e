// Package cli is flowgate's cobra command tree, one file per command group.
// Commands are thin: they parse flags, call an api.Client, and print through
// one printer so --json and text never drift. The logic lives in host.
//
// Exit codes are the same for every command: 0 ok, 1 not found or runtime
// failure, 2 usage or invalid input, 3 revision conflict, 4 audit findings
// (tasks audit --fail-on), 5 outcome unknown (the gateway stopped after
// the request went out and before it answered; the message says how to
// find out).
package cli
