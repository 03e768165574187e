package schedule

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// Kind says which of the three schedule forms a Schedule uses.
type Kind string

// The schedule kinds, one per CLI flag.
const (
	// KindCron fires at the wall-clock times a cron expression names, in TZ.
	KindCron Kind = "cron"
	// KindEvery fires every Every, at Anchor plus whole multiples of Every.
	KindEvery Kind = "every"
	// KindAt fires once, at At.
	KindAt Kind = "at"
)

// DSTPolicy says what a cron schedule does with a wall-clock time that a
// spring-forward transition skips. A time repeated by a fall-back transition
// always fires once, at its first occurrence, whatever the policy.
type DSTPolicy string

// The DST policies. The zero value means DSTShift.
const (
	// DSTShift runs a skipped wall time at the first valid instant after the
	// gap (02:30 on a 02:00→03:00 night runs at 03:00). Several skipped times
	// shifted to the same instant, or onto a time the schedule names anyway,
	// fire once.
	DSTShift DSTPolicy = "shift"
	// DSTSkip drops a skipped wall time: no run that day for that time.
	DSTSkip DSTPolicy = "skip"
)

// MaxTimes caps how many times Between lists, and how many PlanCatchUp
// returns in each of its lists.
const MaxTimes = 100_000

// Schedule says when a job fires. It is plain data: build it with
// ParseSchedule from CLI flags, or as a literal and check it with Validate.
// Next, Between and PlanCatchUp are pure functions of it and their arguments.
type Schedule struct {
	// Kind selects which of the fields below apply.
	Kind Kind
	// Expr is the cron expression for KindCron: 5 fields (minute hour
	// day-of-month month day-of-week), 6 fields (seconds first), or a
	// descriptor (@yearly, @monthly, @weekly, @daily, @hourly, @every DUR).
	// "@every DUR" behaves exactly like KindEvery with Every = DUR.
	Expr string
	// TZ is the IANA zone the cron expression is read in. Empty means UTC.
	// Only for KindCron.
	TZ string
	// DST is the spring-forward gap policy for KindCron. Empty means DSTShift.
	DST DSTPolicy
	// Every is the interval for KindEvery; it must be at least one second.
	Every time.Duration
	// Anchor fixes the phase of an interval schedule (KindEvery, or KindCron
	// with "@every"): it fires at Anchor + k·Every. Zero means the Unix epoch,
	// so a 1h interval fires on the UTC hour. Anchoring, rather than counting
	// from the end of the previous run, keeps intervals from drifting.
	Anchor time.Time
	// At is the instant a KindAt schedule fires.
	At time.Time
	// Stagger, for KindCron, spreads the fires over a window: each is
	// moved later by StaggerOffset(StaggerKey, Stagger). Zero means
	// DefaultStagger for a schedule with a StaggerKey that fires at the
	// top of an hour, unless Exact.
	Stagger time.Duration
	// Exact keeps a KindCron schedule's times as written: no default
	// stagger.
	Exact bool
	// StaggerKey picks the offset within the stagger window: the job's id,
	// so the offset is the same on every gateway and after every restart.
	StaggerKey string
	// Zones, if set, caches the zone TZ names across calls (see Zones);
	// nil reads the zone file on every call. It is not part of what the
	// schedule says, only of how fast it is computed.
	Zones *Zones
}

// Validate checks the schedule on its own terms (it cannot know the current
// time, so a past At is ParseSchedule's concern). It returns a *FlagError,
// matching ErrInvalidSchedule, that names the flag and the rule broken.
func (s Schedule) Validate() error {
	_, err := s.compile()
	return err
}

// Next returns the first time the schedule fires strictly after after, in
// after's location. It returns the zero time when the schedule never fires
// again (a past KindAt, a cron expression with no match within five years)
// or is invalid; call Validate first to tell those apart.
func (s Schedule) Next(after time.Time) time.Time {
	c, err := s.compile()
	if err != nil {
		return time.Time{}
	}
	return c.next(after).In(after.Location())
}

// Between lists the times the schedule fires in (from, to], oldest first, in
// from's location. It is what catch-up and backfill iterate over. It returns
// ErrTooManyTimes, with the first MaxTimes times, when the range holds more.
func (s Schedule) Between(from, to time.Time) ([]time.Time, error) {
	c, err := s.compile()
	if err != nil {
		return nil, err
	}
	return c.between(from, to, MaxTimes)
}

// compiled is a validated schedule ready to compute fire times.
type compiled struct {
	kind   Kind
	spec   *cron.SpecSchedule
	loc    *time.Location
	dst    DSTPolicy
	every  time.Duration
	anchor time.Time
	at     time.Time
	// window is the stagger window and offset the delay every fire is
	// moved by (see staggerWindow, StaggerOffset).
	window, offset time.Duration
}

func (s Schedule) compile() (compiled, error) {
	c := compiled{kind: s.Kind, dst: s.DST, loc: time.UTC}
	switch s.DST {
	case "", DSTShift:
		c.dst = DSTShift
	case DSTSkip:
	default:
		return c, flagErr("--dst", fmt.Sprintf("unknown policy %q; use skip or shift", s.DST))
	}
	if s.Kind != KindCron && s.TZ != "" {
		return c, flagErr("--tz", fmt.Sprintf("applies only to --cron, not to --%s", s.Kind))
	}
	if s.Kind != KindCron && s.DST != "" {
		return c, flagErr("--dst", fmt.Sprintf("applies only to --cron, not to --%s", s.Kind))
	}
	switch s.Kind {
	case KindCron:
		loc, err := loadZone(s.Zones, s.TZ)
		if err != nil {
			return c, err
		}
		c.loc = loc
		sched, err := parseCron(s.Expr)
		if err != nil {
			return c, err
		}
		switch sc := sched.(type) {
		case *cron.SpecSchedule:
			c.spec = sc
			if c.next(time.Unix(0, 0)).IsZero() {
				return c, flagErr("--cron", fmt.Sprintf("%q never matches a date (check day of month against month)", s.Expr))
			}
		case cron.ConstantDelaySchedule:
			c.kind, c.every = KindEvery, sc.Delay
		}
	case KindEvery:
		if s.Every < time.Second {
			return c, flagErr("--every", fmt.Sprintf("interval %s is below the minimum of 1s", s.Every))
		}
		c.every = s.Every
	case KindAt:
		if s.At.IsZero() {
			return c, flagErr("--at", "a time is required")
		}
		c.at = s.At
	default:
		return c, flagErr("--cron", fmt.Sprintf("schedule kind %q is unknown; give exactly one of --cron, --every or --at", s.Kind))
	}
	c.anchor = s.Anchor
	if c.anchor.IsZero() {
		c.anchor = time.Unix(0, 0)
	}
	w, err := s.staggerWindow(c)
	if err != nil {
		return c, err
	}
	c.window, c.offset = w, StaggerOffset(s.StaggerKey, w)
	return c, nil
}

// next is the first fire strictly after after. A stagger moves every fire
// by the same offset, so it is the unstaggered fire after after-offset,
// moved: Next, Between and PlanCatchUp, hence catch-up and backfill, all
// see the staggered times.
func (c compiled) next(after time.Time) time.Time {
	if c.offset == 0 {
		return c.nextUnstaggered(after)
	}
	t := c.nextUnstaggered(after.Add(-c.offset))
	if t.IsZero() {
		return t
	}
	return t.Add(c.offset)
}

func (c compiled) nextUnstaggered(after time.Time) time.Time {
	switch c.kind {
	case KindAt:
		if c.at.After(after) {
			return c.at
		}
		return time.Time{}
	case KindEvery:
		return nextEvery(c.anchor, c.every, after)
	default:
		return nextCron(c.spec, c.loc, c.dst, after)
	}
}

func (c compiled) between(from, to time.Time, limit int) ([]time.Time, error) {
	var out []time.Time
	for t := c.next(from); !t.IsZero() && !t.After(to); t = c.next(t) {
		if len(out) == limit {
			return out, fmt.Errorf("%w: more than %d between %s and %s", ErrTooManyTimes, limit, from.Format(time.RFC3339), to.Format(time.RFC3339))
		}
		out = append(out, t.In(from.Location()))
	}
	return out, nil
}

// nextEvery returns the first anchor + k·every strictly after after.
func nextEvery(anchor time.Time, every time.Duration, after time.Time) time.Time {
	d := after.Sub(anchor)
	k := d / every
	if d < 0 && d%every != 0 {
		k--
	}
	return anchor.Add((k + 1) * every)
}
