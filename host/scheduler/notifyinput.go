package scheduler

import (
	"fmt"
	"slices"
	"strings"
)

// NotifyPolicies are the values of --notify: what the flows a job's runs
// make tell their destinations (see sdk.Flow's notify policy).
var NotifyPolicies = []string{"done_only", "state_changes", "silent"}

// parseNotify checks --notify and --notify-to. Destinations with no
// policy get the engine's default one; silent with destinations is
// refused, since it would send them nothing.
func parseNotify(policy string, to []string) (string, []string, error) {
	policy = strings.TrimSpace(policy)
	if policy != "" && !slices.Contains(NotifyPolicies, policy) {
		return "", nil, flagErr("--notify", fmt.Sprintf("%q is not a notify policy; use one of %s", policy, strings.Join(NotifyPolicies, ", ")))
	}
	dests := specs(to)
	if policy == "silent" && len(dests) > 0 {
		return "", nil, flagErr("--notify-to", "--notify silent sends nothing; drop --notify-to or choose done_only or state_changes")
	}
	return policy, dests, nil
}

// specs is the destination specs of a repeatable flag, trimmed, with
// empty ones (how edit clears the list) and repeats dropped; nil when none
// is left.
func specs(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
