package cli

import (
	"maps"
	"slices"
	"strings"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// redacted replaces each --env value in what tasks show prints, unless
// --show-env is given. --secret-env values are never in a record at all.
const redacted = "(redacted)"

// redactEnv returns t with its spec's env values replaced by redacted; t
// itself is left as it was. A task without env is returned as is.
func redactEnv(t *apitype.Task) *apitype.Task {
	if t == nil || len(t.Spec.Env) == 0 {
		return t
	}
	c := *t
	c.Spec.Env = make(map[string]string, len(t.Spec.Env))
	for k := range t.Spec.Env {
		c.Spec.Env[k] = redacted
	}
	return &c
}

// envRows adds the rows of tasks show that describe t's environment: the
// --env variables (values as t holds them, so redacted unless
// --show-env), the secret names, and whether it inherits the caller's.
func envRows(row func(k, v string), t *apitype.Task) {
	if len(t.Spec.Env) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(t.Spec.Env)) {
			kv = append(kv, k+"="+t.Spec.Env[k])
		}
		row("env", clean(strings.Join(kv, " ")))
	}
	if len(t.Spec.SecretEnv) > 0 {
		row("secretEnv", clean(strings.Join(t.Spec.SecretEnv, " "))+" (values never stored)")
	}
	if t.Spec.InheritEnv {
		row("inheritEnv", "the caller's environment (held in memory, not stored)")
	}
}
