package scheduler

import (
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/schedule"
)

// JobPatch changes some fields of a job, one pointer per CLI flag; nil
// leaves a field as it is. Giving one payload (--pipeline or --command)
// replaces the other, and likewise for --webhook and --notify-command; an
// empty --webhook or --notify-command turns delivery off. The schedule is
// kept unless a schedule flag is set: --cron, --every or --at replaces it
// (a new --cron keeps the old --tz, --dst, --stagger and --exact unless
// those are given too); --tz, --dst, --stagger or --exact alone re-reads a
// cron schedule with the new value.
type JobPatch struct {
	Name, Description               *string
	Cron, TZ, DST, Every, At        *string
	Stagger                         *string
	Exact                           *bool
	Pipeline, ArgsJSON, Command     *string
	GateTimeout                     *string
	Session, Overlap, CatchUpWindow *string
	Webhook, NotifyCommand          *string
	FailureAlertAfter               *int
	FailureAlertCooldown            *string
	FailureAlertWebhook             *string
	FailureAlertCommand             *string
	DeleteAfterRun, Disabled        *bool

	// AnnounceTo, FailureAlertTo and NotifyTo replace the whole list; a
	// list of empty strings clears it.
	AnnounceTo, FailureAlertTo, NotifyTo *[]string
	Notify                               *string
}

// patchSchedule returns the schedule old becomes under p. A new --cron
// keeps the old --tz, --dst, --stagger and --exact unless those are given
// too; they alone re-read the old cron schedule.
func patchSchedule(old JobSchedule, p JobPatch, now time.Time) (schedule.Schedule, error) {
	keep := func(f *schedule.Flags) {
		if p.TZ == nil {
			f.TZ = old.TZ
		}
		if p.DST == nil {
			f.DST = string(old.DST)
		}
		switch {
		case p.Stagger != nil || p.Exact != nil:
			// --stagger D replaces --exact and --exact replaces --stagger.
		case old.Exact:
			f.Exact = true
		case old.Stagger > 0:
			f.Stagger = time.Duration(old.Stagger).String()
		}
	}
	switch {
	case p.Cron != nil || p.Every != nil || p.At != nil:
		f := schedule.Flags{Cron: deref(p.Cron), Every: deref(p.Every), At: deref(p.At), TZ: deref(p.TZ), DST: deref(p.DST), Stagger: deref(p.Stagger), Exact: derefBool(p.Exact)}
		if old.Kind == schedule.KindCron && p.Every == nil && p.At == nil {
			keep(&f)
		}
		return schedule.ParseSchedule(f, now)
	case p.TZ != nil || p.DST != nil || p.Stagger != nil || p.Exact != nil:
		flag := "--exact"
		for _, f := range []struct {
			set  bool
			name string
		}{{p.Stagger != nil, "--stagger"}, {p.DST != nil, "--dst"}, {p.TZ != nil, "--tz"}} {
			if f.set {
				flag = f.name
			}
		}
		if old.Kind != schedule.KindCron {
			return schedule.Schedule{}, flagErr(flag, fmt.Sprintf("applies only to a --cron schedule, and this job's is --%s; give the schedule flag again with it", old.Kind))
		}
		f := schedule.Flags{Cron: old.Expr, TZ: deref(p.TZ), DST: deref(p.DST), Stagger: deref(p.Stagger), Exact: derefBool(p.Exact)}
		keep(&f)
		s, err := schedule.ParseSchedule(f, now)
		s.Anchor = old.Anchor
		return s, err
	}
	return old.Schedule(), nil
}

// patchInput returns in with p's fields applied.
func patchInput(in JobInput, p JobPatch) JobInput {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&in.Name, p.Name)
	set(&in.Description, p.Description)
	if p.Pipeline != nil && p.Command == nil {
		in.Command = ""
	}
	if p.Command != nil && p.Pipeline == nil {
		in.Pipeline, in.ArgsJSON, in.GateTimeout = "", "", ""
	}
	set(&in.Pipeline, p.Pipeline)
	set(&in.ArgsJSON, p.ArgsJSON)
	set(&in.GateTimeout, p.GateTimeout)
	set(&in.Command, p.Command)
	set(&in.Session, p.Session)
	set(&in.Overlap, p.Overlap)
	set(&in.CatchUpWindow, p.CatchUpWindow)
	if p.Webhook != nil && p.NotifyCommand == nil {
		in.NotifyCommand = ""
	}
	if p.NotifyCommand != nil && p.Webhook == nil {
		in.Webhook = ""
	}
	set(&in.Webhook, p.Webhook)
	set(&in.NotifyCommand, p.NotifyCommand)
	if p.FailureAlertAfter != nil {
		in.FailureAlertAfter = *p.FailureAlertAfter
		if in.FailureAlertAfter == 0 {
			// Turning alerts off drops their settings too.
			if p.FailureAlertCooldown == nil {
				in.FailureAlertCooldown = ""
			}
			if p.FailureAlertWebhook == nil && p.FailureAlertCommand == nil {
				in.FailureAlertWebhook, in.FailureAlertCommand = "", ""
			}
			if p.FailureAlertTo == nil {
				in.FailureAlertTo = nil
			}
		}
	}
	set(&in.FailureAlertCooldown, p.FailureAlertCooldown)
	if p.FailureAlertWebhook != nil && p.FailureAlertCommand == nil {
		in.FailureAlertCommand = ""
	}
	if p.FailureAlertCommand != nil && p.FailureAlertWebhook == nil {
		in.FailureAlertWebhook = ""
	}
	set(&in.FailureAlertWebhook, p.FailureAlertWebhook)
	set(&in.FailureAlertCommand, p.FailureAlertCommand)
	setList := func(dst *[]string, v *[]string) {
		if v != nil {
			*dst = *v
		}
	}
	setList(&in.AnnounceTo, p.AnnounceTo)
	setList(&in.FailureAlertTo, p.FailureAlertTo)
	setList(&in.NotifyTo, p.NotifyTo)
	set(&in.Notify, p.Notify)
	if p.DeleteAfterRun != nil {
		in.DeleteAfterRun = *p.DeleteAfterRun
	}
	if p.Disabled != nil {
		in.Disabled = *p.Disabled
	}
	return in
}

func derefBool(p *bool) bool { return p != nil && *p }

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
