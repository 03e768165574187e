package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Flags holds the raw schedule flags of a job command, as typed.
type Flags struct {
	// Cron is --cron: a 5- or 6-field expression or a descriptor.
	Cron string
	// TZ is --tz: an IANA zone for --cron, and for an --at without offset.
	TZ string
	// DST is --dst: skip or shift, for --cron only. Empty means shift.
	DST string
	// Every is --every: a Go duration such as 90s or 1h30m.
	Every string
	// At is --at: RFC 3339 ("2026-03-08T09:00:00Z"), a local date-time read
	// in --tz ("2026-03-08 09:00" or "2026-03-08T09:00:00"), or a duration
	// from now ("20m" or "+20m").
	At string
	// Stagger is --stagger: spread a --cron job's fires over this window
	// (a Go duration; 0 is the same as Exact).
	Stagger string
	// Exact is --exact: keep a --cron job's times as written, without the
	// default stagger of a top-of-hour schedule.
	Exact bool
}

// atLayouts are the offset-less forms --at accepts, read in --tz.
var atLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

// ParseSchedule turns CLI flags into a valid Schedule. now is the current
// time: it resolves a relative --at, rejects a past one, and anchors --every
// so the first run is one interval from now. Errors are *FlagError values
// naming the flag and the rule.
func ParseSchedule(f Flags, now time.Time) (Schedule, error) {
	var set []string
	for _, p := range []struct{ flag, v string }{{"--cron", f.Cron}, {"--every", f.Every}, {"--at", f.At}} {
		if strings.TrimSpace(p.v) != "" {
			set = append(set, p.flag)
		}
	}
	switch len(set) {
	case 0:
		return Schedule{}, flagErr("", "one of --cron, --every or --at is required (for example --every 1h)")
	case 1:
	default:
		return Schedule{}, flagErr(set[1], fmt.Sprintf("cannot be combined with %s; give exactly one schedule", set[0]))
	}
	var s Schedule
	switch set[0] {
	case "--cron":
		s = Schedule{Kind: KindCron, Expr: strings.TrimSpace(f.Cron), TZ: f.TZ, DST: DSTPolicy(f.DST), Anchor: now}
	case "--every":
		if f.TZ != "" {
			return Schedule{}, flagErr("--tz", "cannot be used with --every: an interval is elapsed time and has no time zone")
		}
		d, err := time.ParseDuration(strings.TrimSpace(f.Every))
		if err != nil {
			return Schedule{}, flagErr("--every", fmt.Sprintf("%q is not a duration; use a form like 90s, 15m or 1h30m", f.Every))
		}
		s = Schedule{Kind: KindEvery, Every: d, Anchor: now}
	case "--at":
		at, err := parseAt(strings.TrimSpace(f.At), f.TZ, now)
		if err != nil {
			return Schedule{}, err
		}
		if !at.After(now) {
			return Schedule{}, flagErr("--at", fmt.Sprintf("%s is in the past (now is %s); give a future time", at.Format(time.RFC3339), now.Format(time.RFC3339)))
		}
		s = Schedule{Kind: KindAt, At: at}
	}
	if set[0] != "--cron" && f.DST != "" {
		return Schedule{}, flagErr("--dst", fmt.Sprintf("applies only to --cron, not to %s", set[0]))
	}
	if err := parseStagger(f, &s); err != nil {
		return Schedule{}, err
	}
	if err := s.Validate(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

func parseAt(v, tz string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(strings.TrimPrefix(v, "+")); err == nil {
		return now.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	loc, err := loadZone(nil, tz) // parsing is rare: no cache
	if err != nil {
		return time.Time{}, err
	}
	for _, layout := range atLayouts {
		// Parse the wall fields as UTC: ParseInLocation would quietly move a
		// time in a DST gap out of it.
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		r, ok := resolveWall(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), loc, DSTSkip)
		if !ok {
			return time.Time{}, flagErr("--at", fmt.Sprintf("%s does not exist in %s (clocks skip it for daylight saving); pick a time outside the gap", v, loc))
		}
		return r, nil
	}
	return time.Time{}, flagErr("--at", fmt.Sprintf("%q is not a time; use RFC 3339 (2026-03-08T09:00:00Z), a date-time read in --tz (2026-03-08 09:00) or a duration from now (+20m)", v))
}

// cronParser accepts what robfig accepts with optional seconds: 5 or 6
// fields and descriptors.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// cronFields names the fields of a 6-field expression, in order.
var cronFields = [6]string{"seconds", "minute", "hour", "day of month", "month", "day of week"}

// parseCron parses expr with robfig and, on failure, finds the field at
// fault: robfig's messages name the value but not the field. Every
// compile of a schedule parses, so a valid expression is parsed once.
func parseCron(expr string) (cron.Schedule, error) {
	if expr == "" {
		return nil, flagErr("--cron", "an expression is required")
	}
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, flagErr("--cron", "a TZ= prefix is not allowed; give the zone with --tz")
	}
	if strings.HasPrefix(expr, "@") {
		sched, err := cronParser.Parse(expr)
		if err != nil {
			return nil, flagErr("--cron", fmt.Sprintf("descriptor %q: %v; use @yearly, @monthly, @weekly, @daily, @hourly or @every DURATION", expr, err))
		}
		if rest, ok := strings.CutPrefix(expr, "@every "); ok {
			// robfig silently raises intervals below 1s to 1s and truncates
			// fractions of a second; reject them instead.
			if d, _ := time.ParseDuration(rest); d < time.Second || d%time.Second != 0 {
				return nil, flagErr("--cron", fmt.Sprintf("%q: interval must be whole seconds, at least 1s", expr))
			}
		}
		return sched, nil
	}
	sched, err := cronParser.Parse(expr)
	if err == nil {
		return sched, nil
	}
	fields := strings.Fields(expr)
	names := cronFields[:]
	switch len(fields) {
	case 5:
		names = cronFields[1:]
	case 6:
	default:
		return nil, flagErr("--cron", fmt.Sprintf("%q has %d fields; want 5 (%s) or 6 (%s)", expr, len(fields), fieldList(5), fieldList(6)))
	}
	for i, f := range fields {
		probe := []string{"*", "*", "*", "*", "*", "*"}
		probe[6-len(fields)+i] = f
		if _, err := cronParser.Parse(strings.Join(probe, " ")); err != nil {
			return nil, flagErr("--cron", fmt.Sprintf("%s field %q is invalid: %v; fields are %s", names[i], f, err, fieldList(len(fields))))
		}
	}
	return nil, flagErr("--cron", fmt.Sprintf("%q: %v", expr, err))
}

func fieldList(n int) string {
	if n == 6 {
		return "seconds minute hour day-of-month month day-of-week"
	}
	return "minute hour day-of-month month day-of-week"
}
