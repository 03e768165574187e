package cli

import (
	"strings"

	"github.com/flowgate/flowgate/host/scheduler"
)

// shownDest is a destination spec as cron output shows it.
func shownDest(spec string) string { return clean(spec) }

// destsText lists destination specs for cron show, or none.
func destsText(specs []string) string {
	if len(specs) == 0 {
		return "none"
	}
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = shownDest(s)
	}
	return strings.Join(out, ", ")
}

// deliveriesText lists where a job's failure alerts go.
func deliveriesText(ds []scheduler.Delivery) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = deliveryText(d)
	}
	return strings.Join(out, ", ")
}

// notifyText is the notify policy of a job's flows, with its
// destinations.
func notifyText(j scheduler.Job) string {
	if j.Notify == "" && len(j.NotifyTo) == 0 {
		return "default (done_only, to no destination)"
	}
	p := j.Notify
	if p == "" {
		p = "done_only"
	}
	if len(j.NotifyTo) == 0 {
		return p
	}
	return p + " to " + destsText(j.NotifyTo)
}
