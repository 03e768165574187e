package cli

import (
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// chainRows adds what `tasks flow show` says about v's chain: the chain,
// the source a continuation was based on and its receipt (reason,
// review, reused and rerun nodes), the chain's first failure, the
// continuation a first run has. usageRows adds the chain's usage.
func chainRows(row func(k, v string), v apitype.FlowView) {
	row("chain", v.Chain())
	if v.ContinuedBy != "" {
		row("continuedBy", v.ContinuedBy)
	}
	if r := v.Continuation; r != nil {
		row("source", fmt.Sprintf("%s at revision %d", r.SourceFlowID, r.SourceRevision))
		if v.FirstFailure != "" {
			row("firstFailure", clip(clean(v.FirstFailure), 120))
		}
		row("continueReason", clip(clean(r.Reason), 120))
		if r.Review != "" {
			row("review", clip(clean(r.Review), 120))
		}
		if r.FromStep != "" {
			row("rerunFrom", clean(r.FromStep))
		}
		row("reused", orNA(clean(strings.Join(r.Reuse, ", "))))
		row("rerun", orNA(clean(strings.Join(r.Rerun, ", "))))
	}
}
