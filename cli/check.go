package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
)

func newCheckCmd(e *env) *cobra.Command {
	var asJSON bool
	var salvage string
	cmd := &cobra.Command{
		Use:   "check [--salvage OUT]",
		Short: "Verify the store: bbolt's page check, then the indexes against the records",
		Long: `Verify the store. First bbolt's page check reads every page of the file;
then, if the pages are sound, every index entry is compared with its
record and every record with the index entries it must have.

With a gateway running, the gateway checks its store while work goes on
(writes wait during the page check, which takes time in proportion to the
file size); with none, this command opens the store file read-only, so a
damaged file is never written to.

Each problem is listed with its kind, key, record and what repairs it:
  missing, orphan  an index entry lacking or left over: repaired by
                   'flowgate tasks maintenance --apply'
  damaged          a flow or task record that does not decode or that
                   flowgate could not have written (an unknown status, no
                   id): never indexed or acted on, and moved to the
                   quarantine by 'flowgate tasks maintenance --apply'
  page             damage bbolt found in the file: restore from a backup
                   (flowgate backup), with the gateway stopped

The quarantine (the damaged records maintenance moved away, with why and
when, and their bytes in --json) is listed after the problems. It is kept,
by backups too, for a person to look at; it is not a problem.

With --salvage OUT, no check runs: every record that can still be read
is copied, with its revision, into a new store file OUT (which must not
exist), reading the damaged file page by page and changing nothing in it,
and what was lost is listed: each damaged page, with the first key under
it where a parent page names it, and counts by kind. When damage cuts
the tree, every page it no longer reaches is then scanned for leaf pages
that still parse, and their records are copied too, the newest copy of
each (the report says how many came from the scan). Stop the gateway
first. Then move the damaged file aside, put OUT in its place, and run
'flowgate check': indexes that name lost records are repaired by
'flowgate tasks maintenance --apply'.

A file damaged past reading makes no command crash: each fails with exit
status 1 and a message naming the damaged page.

Exit status: 0 when the store is sound (with --salvage: when OUT is
written), 1 when the check found damage (listed on stdout, a summary on
stderr) or could not run.`,
		Example: `  flowgate check
  flowgate check --json | jq '.problems[] | select(.repairable | not)'
  flowgate check --salvage ~/salvaged.db`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := e.homeFileOnly("check"); err != nil {
				return err
			}
			if salvage != "" {
				return e.salvage(cmd.Context(), salvage, asJSON)
			}
			dir, err := e.home()
			if err != nil {
				return err
			}
			var rep api.CheckReport
			r, err := gateway.Dial(dir, gateway.StartWait)
			switch {
			case err == nil:
				defer r.Close()
				rep, err = r.Check(cmd.Context())
			case errors.Is(err, api.ErrNoGateway):
				rep, err = api.CheckHome(cmd.Context(), dir)
			}
			if err != nil {
				return err
			}
			if err := (printer{e.stdout, asJSON}).emit(rep, func(w io.Writer) { writeCheck(w, rep) }); err != nil {
				return err
			}
			if rep.Clean() {
				return nil
			}
			n, fixable := len(rep.Problems), rep.Repairable()
			return exitStatus{code: exitFailure, msg: fmt.Sprintf(
				"check found %d problem(s) in %s: %d repairable with '%s', %d not (see the repair column)",
				n, rep.Path, fixable, api.RepairMaintenance, n-fixable)}
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&salvage, "salvage", "", "copy every record that can still be read into a new store file `OUT`, and list what was lost")
	return cmd
}

func writeCheck(w io.Writer, r api.CheckReport) {
	var pages, indexes int
	for _, p := range r.Problems {
		if p.Kind == api.ProblemPage {
			pages++
		} else {
			indexes++
		}
	}
	fmt.Fprintf(w, "Store: %s\n", clean(r.Path))
	writeCheckLine(w, "Pages", r.PagesChecked, "the file is too damaged to open", pages)
	writeCheckLine(w, "Indexes", r.IndexesChecked, "reading damaged pages could fail or mislead", indexes)
	if len(r.Problems) == 0 && r.Clean() {
		fmt.Fprintln(w, "No problems found.")
	}
	if len(r.Problems) > 0 {
		fmt.Fprintln(w)
		var t table
		t.add("Kind", "Key", "Record", "Repair", "Detail")
		for _, p := range r.Problems {
			t.add(p.Kind, orNA(clip(p.Key, 60)), orNA(clip(p.Record, 40)), p.Repair, clean(p.Detail))
		}
		t.write(w)
	}
	writeQuarantine(w, r.Quarantine)
}

// writeQuarantine lists the records in the quarantine, if any.
func writeQuarantine(w io.Writer, q []apitype.Quarantined) {
	if len(q) == 0 {
		return
	}
	fmt.Fprintf(w, "\nQuarantine: %d record(s) moved away by maintenance (kept for you to look at; --json has their bytes)\n", len(q))
	var t table
	t.add("Key", "Moved", "Bytes", "Reason")
	for _, r := range q {
		t.add(clip(r.Key, 60), r.At.UTC().Format(time.RFC3339), strconv.Itoa(len(r.Value)), clean(r.Reason))
	}
	t.write(w)
}

// writeCheckLine prints one part of the check: not checked (and why), ok,
// or how many problems it found.
func writeCheckLine(w io.Writer, part string, checked bool, whyNot string, problems int) {
	switch {
	case !checked:
		fmt.Fprintf(w, "%s: not checked: %s\n", part, whyNot)
	case problems == 0:
		fmt.Fprintf(w, "%s: ok\n", part)
	default:
		fmt.Fprintf(w, "%s: %d problem(s)\n", part, problems)
	}
}
