package cli

import (
	"fmt"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// warnDamaged tells a text-mode reader of a listing which records it
// skipped because they cannot be read (apitype.DamagedRecord), one line on
// stderr each, so stdout keeps its shape; with --json they are the
// listing's "damaged" field instead. The listing still exits 0: what it
// shows is true, and the lines say how to clear the rest.
func (e *env) warnDamaged(asJSON bool, records []apitype.DamagedRecord) {
	if asJSON {
		return
	}
	for _, d := range records {
		fmt.Fprintf(e.stderr, "flowgate: skipped damaged record %s: %s (flowgate check lists it; flowgate tasks maintenance --apply moves it to the quarantine)\n",
			clean(d.Key), clean(d.Reason))
	}
}
