package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// flowFind holds the flags of `tasks flow list` that find flows by text,
// time and what started them.
type flowFind struct {
	search, since, until, cron, trigger string
}

func (f *flowFind) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.search, "search", "", "only flows whose goal (the pipeline's, cron job's or task's name), owner or a label holds this text, ignoring case")
	fl.StringVar(&f.since, "since", "", "only flows created at or after this time: RFC 3339 or '2006-01-02 15:04' (UTC)")
	fl.StringVar(&f.until, "until", "", "only flows created at or before this time: RFC 3339 or '2006-01-02 15:04' (UTC)")
	fl.StringVar(&f.cron, "cron", "", "only the runs of this cron job (its id or name); not with --owner or --trigger")
	fl.StringVar(&f.trigger, "trigger", "", "only the flows this trigger started (its name); not with --owner or --cron")
}

// filter puts the search text and time range into ff; a time that cannot
// be read is a usage error naming its flag. The cron job and trigger need
// the client and are resolved by api.FlowOwner.
func (f *flowFind) filter(ff *apitype.FlowFilter) error {
	ff.Search = strings.TrimSpace(f.search)
	var err error
	if f.since != "" {
		if ff.Since, err = parseBackfillTime("--since", f.since); err != nil {
			return err
		}
	}
	if f.until != "" {
		if ff.Until, err = parseBackfillTime("--until", f.until); err != nil {
			return err
		}
	}
	if !ff.Since.IsZero() && !ff.Until.IsZero() && ff.Since.After(ff.Until) {
		return usageError{fmt.Errorf("--since %s is after --until %s; give a --since before the --until", f.since, f.until)}
	}
	return nil
}
