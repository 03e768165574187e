package shell

import (
	"slices"
	"strings"
)

// baseEnvNames are the only variables of the gateway's own environment
// that a task or a command of the gateway's gets. FLOWGATE_HOME is among
// them so that a task or hook running flowgate reaches the gateway that
// ran it; no other FLOWGATE_* variable is: those are the gateway's own
// settings and credentials (FLOWGATE_ETCD_PASSWORD).
var baseEnvNames = []string{"PATH", "HOME", "LANG", "TZ", "USER", "FLOWGATE_HOME"}

// BaseEnv returns the part of environ (KEY=VALUE entries) that every task
// and every command the gateway runs on its own behalf (the diagnoser,
// notify and on-finish commands, session checks) starts from: PATH, HOME,
// LANG, TZ, USER and FLOWGATE_HOME. Nothing else of the gateway's
// environment reaches them, so neither the gateway's credentials nor one
// client's secrets leak into another's tasks, and a task gets the same
// environment whether a gateway daemon or the command itself runs it.
// The result is never nil: a nil environment means "inherit all".
func BaseEnv(environ []string) []string {
	env := []string{}
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && slices.Contains(baseEnvNames, k) {
			env = append(env, kv)
		}
	}
	return env
}
