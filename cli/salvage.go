package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
)

// salvage runs `flowgate check --salvage OUT`: it copies what can still
// be read into OUT and prints what was lost.
func (e *env) salvage(ctx context.Context, out string, asJSON bool) error {
	dir, err := e.home()
	if err != nil {
		return err
	}
	rep, err := api.SalvageHome(ctx, dir, out)
	if err != nil {
		return err
	}
	return printer{e.stdout, asJSON}.emit(rep, func(w io.Writer) { writeSalvage(w, rep) })
}

// writeSalvage prints a salvage report: what was copied, what was lost,
// and how to put the new store in place.
func writeSalvage(w io.Writer, r api.SalvageResult) {
	copied := 0
	for _, n := range r.Copied {
		copied += n
	}
	fmt.Fprintf(w, "Salvaged: %s\n", clean(r.Path))
	fmt.Fprintf(w, "From: %s\n", clean(r.Source))
	fmt.Fprintf(w, "Copied: %d record(s) (%s)\n", copied, orNA(kindCounts(r.Copied)))
	if r.ScannedPages > 0 || len(r.Lost) > 0 {
		writeScan(w, copied, r)
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(w, "Damage: %d problem(s) in the pages, first: %s\n", len(r.Problems), clean(r.Problems[0]))
	}
	if len(r.Lost) == 0 {
		fmt.Fprintln(w, "Lost: nothing")
	} else {
		fmt.Fprintf(w, "Lost: %d damaged page(s) or record(s) (%s); a lost page may have held many records\n\n", len(r.Lost), kindCounts(r.LostByKind))
		var t table
		t.add("Page", "Key", "Reason")
		for _, l := range r.Lost {
			page := "n/a"
			if l.Page != 0 {
				page = strconv.FormatUint(l.Page, 10)
			}
			t.add(page, orNA(clip(l.Key, 60)), clean(l.Reason))
		}
		t.write(w)
		fmt.Fprintln(w)
	}
	if len(r.Missing) > 0 {
		fmt.Fprintf(w, "Missing: %d record(s) that copied index entries name are not in the copy (lost, or the entry itself is damaged)\n", len(r.Missing))
		for _, k := range r.Missing {
			fmt.Fprintf(w, "  %s\n", clean(k))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "To use it: stop the gateway, move %s aside, move %s to its place, then run 'flowgate check'; "+
		"'%s' repairs indexes that name lost records.\n", gateway.StoreFile, clean(r.Path), api.RepairMaintenance)
}

// writeScan says how many of the copied records the walk from the root
// found and how many the page scan found on pages the walk could not
// reach, and what it dropped.
func writeScan(w io.Writer, copied int, r api.SalvageResult) {
	scanned := 0
	for _, n := range r.Scanned {
		scanned += n
	}
	fmt.Fprintf(w, "  %d found by the walk from the root, %d found by scanning %d leaf page(s) it could not reach (%s)\n",
		copied-scanned, scanned, r.ScannedPages, orNA(kindCounts(r.Scanned)))
	if r.Duplicates > 0 || r.Rejected > 0 {
		fmt.Fprintf(w, "  the scan dropped %d older copies of records and %d record(s) that do not decode\n", r.Duplicates, r.Rejected)
	}
	if scanned > 0 {
		fmt.Fprintln(w, "  a scanned page may hold a record deleted before the damage: check what you need before relying on it")
	}
}
