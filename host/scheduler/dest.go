package scheduler

import (
	"context"
	"errors"
	"strings"
)

// Destinations checks and sends to destination specs: the --announce-to,
// --failure-alert-to and --notify-to values of a job, sent as
// DeliveryDest. The gateway passes one built on package notify/dest; this
// package cannot import that package, which sends http(s) and cmd:
// destinations through Send.
type Destinations interface {
	// Check reports whether spec is a destination flowgate can send to.
	// Its error says what is wrong and what to do; it never holds an
	// expanded secret.
	Check(spec string) error
	// SendReport sends r to spec once: a chat or mail destination gets it
	// as text, an http(s) or cmd: one as JSON (ReportMessage). A
	// non-nil error means it did not get there.
	SendReport(ctx context.Context, spec string, r Report) error
}

// errNoDestinations is what a Scheduler with no Destinations answers.
var errNoDestinations = errors.New("this gateway was started with no destination support; destinations work where a gateway or a cron command runs")

// checkDests checks every destination spec of j with d, naming the flag
// of the first one refused.
func checkDests(d Destinations, j Job) error {
	for _, l := range []struct {
		flag  string
		specs []string
	}{{"--announce-to", j.Announce}, {"--failure-alert-to", j.FailureAlert.Dests}, {"--notify-to", j.NotifyTo}} {
		for _, s := range l.specs {
			err := errNoDestinations
			if d != nil {
				err = d.Check(s)
			}
			if err != nil {
				return flagErr(l.flag, strings.TrimSpace(err.Error()))
			}
		}
	}
	return nil
}

// sendDest sends r to spec through the Scheduler's Destinations.
func (s *Scheduler) sendDest(ctx context.Context, spec string, r Report) error {
	if s.cfg.Dests == nil {
		return errNoDestinations
	}
	return s.cfg.Dests.SendReport(ctx, spec, r)
}
