package scheduler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// parseNotify checks --notify and --notify-to. Destinations with no
// policy get the engine's default one; silent with destinations is
// refused, since it would send them nothing.
func parseNotify(policy string, to []string) (string, []string, error) {
	policy = strings.TrimSpace(policy)
	if policy != "" && !slices.Contains(sdk.NotifyPolicies(), policy) {
		return "", nil, flagErr("--notify", fmt.Sprintf("%q is not a notify policy; use one of %s", policy, strings.Join(sdk.NotifyPolicies(), ", ")))
	}
	dests, err := destList("--notify-to", to)
	if err != nil {
		return "", nil, err
	}
	if policy == sdk.NotifySilent && len(dests) > 0 {
		return "", nil, flagErr("--notify-to", "--notify silent sends nothing; drop --notify-to or choose done_only or state_changes")
	}
	return policy, dests, nil
}

// destList is specs(in), refused with flag's name when it is longer
// than the engine lets a flow have (engine.MaxNotifyTo).
func destList(flag string, in []string) ([]string, error) {
	out := specs(in)
	if len(out) > engine.MaxNotifyTo {
		return nil, flagErr(flag, fmt.Sprintf("%d destinations given; at most %d are allowed (name a group of receivers once in the gateway config's notify: map)", len(out), engine.MaxNotifyTo))
	}
	return out, nil
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
