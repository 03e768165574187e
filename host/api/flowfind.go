package api

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/trigger"
	"github.com/flowgate/flowgate/sdk"
)

// findParams are the query parameters of GET /v1/flows that find flows
// by text and time (apitype.FlowFilter's Search, Since, Until and Scan).
var findParams = []string{"search", "since", "until", "scan"}

// setFindQuery puts f's search, time range and scan bound into q; times
// go as RFC 3339 with nanoseconds, so a bound survives the trip exactly.
func setFindQuery(q url.Values, f apitype.FlowFilter) {
	setQuery(q, "search", f.Search)
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.UTC().Format(time.RFC3339Nano))
	}
	if f.Scan > 0 {
		q.Set("scan", strconv.Itoa(f.Scan))
	}
}

// parseFindQuery reads what setFindQuery wrote into f. A time that is not
// RFC 3339, or a scan that is no whole number, is refused by name.
func parseFindQuery(q url.Values, f *apitype.FlowFilter) error {
	f.Search = q.Get("search")
	for name, at := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return fmt.Errorf("%w: %s %q is not an RFC 3339 time such as 2026-03-08T09:00:00Z", sdk.ErrInvalid, name, v)
		}
		*at = t
	}
	if v := q.Get("scan"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: scan %q is not a whole number of at least 0", sdk.ErrInvalid, v)
		}
		f.Scan = n
	}
	return nil
}

// FlowOwner is the owner key that selects the flows of one of owner, a
// cron job (its id or name) or a trigger (its name), whichever is given;
// "" when none is. Giving more than one is refused, since each names the
// flows' owner. A trigger's flows stay selectable after it is removed; a
// cron job must exist.
func FlowOwner(ctx context.Context, c Client, owner, cronJob, triggerName string) (string, error) {
	given := 0
	for _, v := range []string{owner, cronJob, triggerName} {
		if v != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return "", fmt.Errorf("%w: give one of owner, cron job and trigger, not %d: each selects the flows' owner", sdk.ErrInvalid, given)
	case cronJob != "":
		job, err := c.GetJob(ctx, cronJob)
		if err != nil {
			return "", fmt.Errorf("cron job %q: %w (flowgate cron list shows the jobs)", cronJob, err)
		}
		return scheduler.JobOwnerKey(job.ID), nil
	case triggerName != "":
		return trigger.OwnerKey(triggerName), nil
	}
	return owner, nil
}
