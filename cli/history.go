package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

func newFlowHistoryCmd(e *env) *cobra.Command {
	var asJSON, follow bool
	cmd := &cobra.Command{
		Use:   "history <flow-id>",
		Short: "Show a flow's history: every change to it and its tasks, in order",
		Long: `Show a flow's history: status moves, revisions, tasks created, started,
finished, retried or lost, milestones, progress, gates opened and answered
(by whom, with what), cancel requests, controller errors, continuations and
diagnoses, one line each, oldest first.

--follow prints new entries as they are recorded until the flow ends (or
Ctrl-C). --json prints the history as one JSON object ({entries, next,
dropped, status}); with --follow, one JSON entry a line.`,
		Args: args(1, "one flow id"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if follow {
				ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				if !asJSON {
					fmt.Fprintf(e.stdout, "History of flow %s:\n", clean(a[0]))
				}
				err := e.followHistory(ctx, a[0], func(en apitype.HistoryEntry) error {
					return printEntry(e.stdout, en, asJSON)
				})
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				page, err := wholeHistory(ctx, c, a[0])
				if err != nil {
					return err
				}
				return printer{e.stdout, asJSON}.emit(page, func(w io.Writer) { writeHistory(w, a[0], page) })
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the history as JSON (with --follow, one entry a line)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "print new entries as they are recorded until the flow ends")
	return cmd
}

// wholeHistory reads every page of flow id's history.
func wholeHistory(ctx context.Context, c api.Historian, id string) (apitype.HistoryPage, error) {
	all := apitype.HistoryPage{Entries: []apitype.HistoryEntry{}}
	for {
		page, err := c.History(ctx, id, all.Next, 0)
		if err != nil {
			return all, err
		}
		all.Entries = append(all.Entries, page.Entries...)
		all.Next, all.Dropped, all.Status = page.Next, page.Dropped, page.Status
		if len(page.Entries) < api.MaxHistoryPage {
			return all, nil
		}
	}
}

func writeHistory(w io.Writer, id string, page apitype.HistoryPage) {
	fmt.Fprintf(w, "History of flow %s: %d entries", clean(id), len(page.Entries))
	if page.Dropped > 0 {
		fmt.Fprintf(w, " (%d older progress entries dropped to keep it bounded)", page.Dropped)
	}
	fmt.Fprintf(w, ", flow %s\n", page.Status)
	for _, en := range page.Entries {
		printEntry(w, en, false)
	}
}

// printEntry writes one entry: a JSON line, or an aligned text line.
func printEntry(w io.Writer, en apitype.HistoryEntry, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(en)
	}
	line := fmt.Sprintf("%5d  %s  %-21s  %s", en.Seq, stamp(en.At), en.Kind, clean(en.Summary))
	if en.By != "" && !strings.Contains(en.Summary, "by "+en.By) {
		line += "  (by " + clean(en.By) + ")"
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// followHistory passes flow id's history to fn, entry by entry as it is
// recorded, until the flow ends or ctx does. With a gateway it reads the
// gateway's event stream; with none it reads the store for a moment every
// poll, so that it never holds the store's lock from a writer. When the
// gateway stops or starts meanwhile, it carries on from the last entry
// through whichever serves the home then.
func (e *env) followHistory(ctx context.Context, id string, fn func(apitype.HistoryEntry) error) error {
	var (
		after int64
		fnErr error
	)
	track := func(en apitype.HistoryEntry) error {
		after = en.Seq
		fnErr = fn(en)
		return fnErr
	}
	for {
		c, err := e.openReader()
		if err != nil {
			return err
		}
		before := after
		ended, err := followOnce(ctx, c, id, &after, track)
		c.Close()
		switch {
		case fnErr != nil:
			return fnErr
		case ended || ctx.Err() != nil:
			return nil
		case errors.Is(err, sdk.ErrNotFound), errors.Is(err, sdk.ErrInvalid):
			return err
		case err == nil && after != before:
			continue // more may be waiting
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// followOnce follows through c for as long as c lasts: a gateway's stream
// until it ends or breaks, or one page of the store. It reports whether
// the flow has ended with every entry passed.
func followOnce(ctx context.Context, c api.Client, id string, after *int64, fn func(apitype.HistoryEntry) error) (bool, error) {
	if _, remote := c.(*api.Remote); remote {
		err := c.FollowHistory(ctx, id, *after, fn)
		return err == nil, err
	}
	page, err := c.History(ctx, id, *after, 0)
	if err != nil {
		return false, err
	}
	for _, en := range page.Entries {
		if err := fn(en); err != nil {
			return false, err
		}
	}
	return len(page.Entries) == 0 && page.Status.Terminal(), nil
}
