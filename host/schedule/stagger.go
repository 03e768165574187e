package schedule

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// DefaultStagger is the window a cron schedule that fires at the top of
// an hour (minute 0: @hourly, @daily, 0 * * * *, */15 …) is spread over
// unless it is Exact or gives its own Stagger. Jobs written for :00 pile
// up there and hit the same APIs and files at the same second; five
// minutes, as the reference uses, spreads them without moving a job far
// from the time its author named.
const DefaultStagger = 5 * time.Minute

// MaxStagger bounds an explicit stagger: a window longer than a day is a
// typo, not a spread.
const MaxStagger = 24 * time.Hour

// StaggerOffset is the fixed delay, within window, that key (a job's id)
// moves each of its fires by: a hash of key, so every gateway, every
// restart, catch-up and backfill agree on it. It is in whole seconds, the
// resolution of a cron schedule, and zero for a window under a second.
func StaggerOffset(key string, window time.Duration) time.Duration {
	n := uint64(window / time.Second)
	if n == 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return time.Duration(h.Sum64()%n) * time.Second
}

// topOfHour reports whether spec fires at minute 0 of some hour without
// firing every minute: the schedules that pile up at :00.
func topOfHour(spec *cron.SpecSchedule) bool {
	return spec.Minute&1 != 0 && spec.Minute&starBit == 0
}

// staggerWindow is the window c's fires are spread over: s.Stagger when
// given, none when s.Exact, else DefaultStagger for a top-of-hour cron
// schedule with a StaggerKey.
func (s Schedule) staggerWindow(c compiled) (time.Duration, error) {
	switch {
	case s.Stagger < 0:
		return 0, flagErr("--stagger", fmt.Sprintf("must not be negative (got %s); give --exact for no stagger", s.Stagger))
	case s.Stagger > 0 && s.Exact:
		return 0, flagErr("--exact", "cannot be combined with --stagger; give one")
	case s.Stagger > MaxStagger:
		return 0, flagErr("--stagger", fmt.Sprintf("%s is longer than %s, the most a stagger may be", s.Stagger, MaxStagger))
	case s.Exact && s.Kind != KindCron:
		return 0, flagErr("--exact", fmt.Sprintf("applies only to --cron, not to --%s; an interval or a one-shot is never staggered", s.Kind))
	case s.Stagger > 0 && s.Kind != KindCron:
		return 0, flagErr("--stagger", fmt.Sprintf("applies only to --cron, not to --%s; an interval or a one-shot names its own time", s.Kind))
	case s.Stagger > 0 && s.Stagger < time.Second:
		return 0, flagErr("--stagger", fmt.Sprintf("%s is below the minimum of 1s", s.Stagger))
	case s.Stagger > 0:
		return s.Stagger, nil
	case s.Exact || c.spec == nil || s.StaggerKey == "":
		// Without a key there is nothing to pick an offset from: a bare
		// schedule keeps its times as written.
		return 0, nil
	case topOfHour(c.spec):
		return DefaultStagger, nil
	}
	return 0, nil
}

// Window is the stagger window the schedule's fires are spread over (its
// Stagger, or DefaultStagger for a top-of-hour cron schedule that is not
// Exact), and Offset the delay its StaggerKey picks within it; both zero
// when the schedule is invalid or not staggered.
func (s Schedule) Window() (window, offset time.Duration) {
	c, err := s.compile()
	if err != nil {
		return 0, 0
	}
	return c.window, c.offset
}

// parseStagger reads --stagger and --exact into s.
func parseStagger(f Flags, s *Schedule) error {
	s.Exact = f.Exact
	v := strings.TrimSpace(f.Stagger)
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return flagErr("--stagger", fmt.Sprintf("%q is not a duration; use a form like 90s or 5m (or --exact for none)", f.Stagger))
	}
	if d == 0 {
		if f.Exact {
			return nil
		}
		s.Exact = true // --stagger 0 asks for the times as written
		return nil
	}
	s.Stagger = d
	return nil
}
