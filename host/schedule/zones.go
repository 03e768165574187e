package schedule

import (
	"fmt"
	"sync"
	"time"
)

// Zones caches time zones by name. time.LoadLocation reads the zone file
// on every call, which was 40% of computing a next run; a scheduler that
// computes many keeps one Zones and sets it on the schedules it computes
// (Schedule.Zones). Zone rules change only with the system's tz database,
// which a restart picks up. The zero value is an empty cache, ready to
// use and safe for concurrent use.
type Zones struct {
	m sync.Map // zone name → *time.Location
}

// loadZone returns the zone named tz (UTC when empty) through the cache z,
// or straight from the tz database when z is nil. It refuses "Local",
// whose meaning would change with the host, and an unknown name, with a
// *FlagError naming --tz.
func loadZone(z *Zones, tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	if tz == "Local" {
		return nil, flagErr("--tz", `"Local" is not allowed; name the IANA zone, e.g. Europe/Berlin`)
	}
	if z != nil {
		if loc, ok := z.m.Load(tz); ok {
			return loc.(*time.Location), nil
		}
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, flagErr("--tz", fmt.Sprintf("unknown zone %q; use an IANA name such as America/New_York", tz))
	}
	if z != nil {
		z.m.Store(tz, loc)
	}
	return loc, nil
}
