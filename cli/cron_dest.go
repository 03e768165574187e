package cli

import (
	"os"
	"strings"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
)

// useHomeBook makes a command's own store check a job's destinations
// against the home's gateway config (its notify: map), as the gateway
// would. Through a gateway, the gateway checks them with its own book.
func (e *env) useHomeBook(c api.Client) error {
	l, ok := c.(*api.Local)
	if !ok {
		return nil
	}
	dir, err := e.home()
	if err != nil {
		return err
	}
	cfg, err := gateway.HomeConfig(dir, "")
	if err != nil {
		return err
	}
	b, err := cfg.Book(os.LookupEnv)
	if err != nil {
		return err
	}
	l.UseBook(b)
	return nil
}

// shownDest is a destination spec as cron's text output shows it:
// redacted (see shownJob) and with control characters escaped.
func shownDest(spec string) string { return clean(gateway.RedactDest(spec)) }

// shownJob is j as cron commands print it: each destination spec
// through dest.Redact, so that a credential written into one (a named
// destination's is never in the job) is masked in text and JSON alike.
func shownJob(j api.CronJob) api.CronJob {
	redact := func(specs []string) []string {
		if specs == nil {
			return nil
		}
		out := make([]string, len(specs))
		for i, s := range specs {
			out[i] = gateway.RedactDest(s)
		}
		return out
	}
	j.Announce, j.NotifyTo, j.FailureAlert.Dests = redact(j.Announce), redact(j.NotifyTo), redact(j.FailureAlert.Dests)
	return j
}

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
func deliveriesText(ds []api.CronDelivery) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = deliveryText(d)
	}
	return strings.Join(out, ", ")
}

// notifyText is the notify policy of a job's flows, with its
// destinations.
func notifyText(j api.CronJob) string {
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
