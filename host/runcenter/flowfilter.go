package runcenter

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// flowFilter is the flow list's filter as the form sends it: the same
// filters as `tasks flow list`, by the same names.
type flowFilter struct {
	Status, Controller, Owner, Chain string
	// Search is text the flow's goal, owner or a label holds, ignoring
	// case; Cron a cron job's id or name; Trigger a trigger's name.
	Search, Cron, Trigger string
	// Since and Until bound the creation time, as typed (UTC).
	Since, Until string
	// AllRuns shows every run of a cron job in a row of its own.
	AllRuns bool
}

// filterOf reads the filter from a query string.
func filterOf(q url.Values) flowFilter {
	return flowFilter{
		Status: q.Get("status"), Controller: q.Get("controller"), Owner: q.Get("owner"), Chain: q.Get("chain"),
		Search: strings.TrimSpace(q.Get("search")), Cron: q.Get("cron"), Trigger: q.Get("trigger"),
		Since: q.Get("since"), Until: q.Get("until"), AllRuns: q.Get("runs") == "all",
	}
}

// Any reports whether the filter selects anything short of every flow.
func (f flowFilter) Any() bool {
	return f.Status != "" || f.Controller != "" || f.Owner != "" || f.Chain != "" || f.Search != "" ||
		f.Cron != "" || f.Trigger != "" || f.Since != "" || f.Until != ""
}

// folds reports whether the runs of a cron job fold into one row: unless
// every run was asked for, or the list is one job's runs already.
func (f flowFilter) folds() bool { return !f.AllRuns && f.Cron == "" }

// query is the filter's query string, with after when set.
func (f flowFilter) query(after string) string {
	q := url.Values{}
	for k, v := range map[string]string{"status": f.Status, "controller": f.Controller, "owner": f.Owner, "chain": f.Chain,
		"search": f.Search, "cron": f.Cron, "trigger": f.Trigger, "since": f.Since, "until": f.Until, "after": after} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.AllRuns {
		q.Set("runs", "all")
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}

// engineFilter is the page's engine filter, but for the owner that a
// cron job or trigger stands for (api.FlowOwner). A status or time that
// cannot be read is refused by name.
func (f flowFilter) engineFilter() (apitype.FlowFilter, error) {
	out := apitype.FlowFilter{ControllerID: f.Controller, ChainID: f.Chain, Search: f.Search, Limit: PageSize}
	if f.Status != "" {
		st, err := sdk.ParseFlowStatus(f.Status)
		if err != nil {
			return out, err
		}
		out.Status = st
	}
	var err error
	if out.Since, err = formTime("since", f.Since); err != nil {
		return out, err
	}
	if out.Until, err = formTime("until", f.Until); err != nil {
		return out, err
	}
	return out, nil
}

// formLayouts are what a time field takes, read in UTC: a browser's
// datetime-local value, with or without seconds, the CLI's form, a date.
var formLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"}

// formTime reads the time field name; "" is no bound.
func formTime(name, v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	for _, layout := range formLayouts {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: %s %q is not a time; give one such as 2026-03-08T09:00 (UTC) or 2026-03-08T09:00:00Z",
		sdk.ErrInvalid, name, v)
}
