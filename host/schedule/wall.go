package schedule

import "time"

// resolveWall maps a wall-clock time in loc to the instant it names.
//
// A wall time that happens twice (a fall-back repeat) maps to its first
// occurrence, so the mapping is monotone in wall time and a repeated time
// fires once. A wall time that does not exist (a spring-forward gap) maps,
// under DSTShift, to the instant the gap ends, the first valid instant after
// it; under DSTSkip it reports ok false.
func resolveWall(y int, mo time.Month, d, h, mi, s int, loc *time.Location, dst DSTPolicy) (t time.Time, ok bool) {
	naive := time.Date(y, mo, d, h, mi, s, 0, time.UTC).Unix()
	// Any offset in force near the wall time is one of these: a zone cannot
	// change twice within a day in practice, and offsets are within ±14 h.
	probes := [3]int64{naive - 86400, naive, naive + 86400}
	var best time.Time
	found := false
	for _, p := range probes {
		_, off := time.Unix(p, 0).In(loc).Zone()
		cand := time.Unix(naive-int64(off), 0).In(loc)
		if _, got := cand.Zone(); got != off {
			continue
		}
		if !found || cand.Before(best) {
			best, found = cand, true
		}
	}
	if found {
		return best, true
	}
	if dst == DSTSkip {
		return time.Time{}, false
	}
	// In a gap: the instant naive-before lies after the transition, in the
	// new zone, whose start is the end of the gap.
	_, before := time.Unix(naive-86400, 0).In(loc).Zone()
	start, _ := time.Unix(naive-int64(before), 0).In(loc).ZoneBounds()
	return start, true
}
