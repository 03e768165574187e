package engine

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// idSlack widens the id-time bounds of a time range: an id's time is its
// flow's creation time, except that a burst of more than 4096 ids in one
// millisecond counts on into the next ones (see idSource). The exact
// bounds are checked on each record's CreatedAt.
const idSlack = time.Second

// checkFind refuses a time range that ends before it starts and a
// negative scan bound, naming what to change.
func (f FlowFilter) checkFind() error {
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Since.After(f.Until) {
		return invalid("the range starts (since %s) after it ends (until %s); give a since before the until",
			f.Since.UTC().Format(time.RFC3339), f.Until.UTC().Format(time.RFC3339))
	}
	if f.Scan < 0 {
		return invalid("the scan bound must not be negative (got %d); zero means no bound", f.Scan)
	}
	return nil
}

// found reports whether fl is inside the time range and holds the search
// text in its goal, owner key (where the cron job or trigger that started
// it is named) or a label, ignoring case. A flow's goal is its readable
// name: the pipeline's or cron job's name, "trigger NAME", or a task's
// label.
func (f FlowFilter) found(fl *sdk.Flow) bool {
	if (!f.Since.IsZero() && fl.CreatedAt.Before(f.Since)) || (!f.Until.IsZero() && fl.CreatedAt.After(f.Until)) {
		return false
	}
	if f.Search == "" {
		return true
	}
	needle := strings.ToLower(f.Search)
	has := func(s string) bool { return strings.Contains(strings.ToLower(s), needle) }
	if has(fl.Goal) || has(fl.OwnerKey) {
		return true
	}
	for k, v := range fl.Labels {
		if has(k) || has(v) {
			return true
		}
	}
	return false
}

// start is where the newest-first scan begins: the cursor, or, when
// Until comes first, just after the last id Until can have.
func (f FlowFilter) start() string {
	if f.Until.IsZero() {
		return f.After
	}
	ms := f.Until.Add(idSlack).UnixMilli() + 1
	bound := fmt.Sprintf("%08x-%04x", uint64(ms)>>16, uint64(ms)&0xffff)
	if f.After != "" && f.After < bound {
		return f.After
	}
	return bound
}

// older is the scan's stop for Since: an entry whose id was made more
// than idSlack before Since, and every entry after it, is older still.
// Nil when Since is not set.
func (f FlowFilter) older() func(key string) bool {
	if f.Since.IsZero() {
		return nil
	}
	cut := f.Since.Add(-idSlack).UnixMilli()
	return func(key string) bool {
		ms, ok := idMillis(lastSegment(key))
		return ok && ms < cut
	}
}

// idMillis is the creation time, in Unix milliseconds, an id carries in
// its first 48 bits; ok is false for an id of another shape.
func idMillis(id string) (ms int64, ok bool) {
	if len(id) < 13 || id[8] != '-' {
		return 0, false
	}
	b, err := hex.DecodeString(id[0:8] + id[9:13])
	if err != nil {
		return 0, false
	}
	for _, c := range b {
		ms = ms<<8 | int64(c)
	}
	return ms, true
}
