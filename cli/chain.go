package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flowgate/flowgate/host/engine"
)

// chainRows adds what `tasks flow show` says about v's chain: the chain,
// the source a continuation was based on and its receipt (reason,
// review, reused and rerun nodes), the chain's first failure, the
// continuation a first run has, and the chain's reported usage.
func chainRows(row func(k, v string), v engine.FlowView) {
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
	if u := v.ChainUsage; u != nil {
		row("chainUsage", fmt.Sprintf("%s input tokens · %s output tokens · cost %s (reported usage only)",
			strconv.FormatInt(u.InputTokens, 10), strconv.FormatInt(u.OutputTokens, 10), strconv.FormatFloat(u.Cost, 'f', -1, 64)))
	}
}
