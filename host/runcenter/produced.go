package runcenter

import (
	"bytes"
	"encoding/json"
	"sort"
	"time"
)

// outputLimit bounds how much of a flow's output its page shows inline.
const outputLimit = 16 << 10

// outputView is what a flow's page shows of what the flow produced
// (sdk.Flow.Output): the value the record holds, indented, and the text
// printed ahead of it; a value kept outside the record is named by its
// digest, which `flowgate tasks flow show` reads.
type outputView struct {
	Value, Text string
	// Clipped says Value or Text was cut to outputLimit.
	Clipped bool
	// Kept is the digest of a value kept outside the record.
	Kept, TextKept string
}

// Output is the flow's output as its page shows it; nil when the flow
// has none.
func (p flowPage) Output() *outputView {
	o := p.Flow.Output
	if o == nil {
		return nil
	}
	v := &outputView{Text: o.Text}
	if len(o.Value) > 0 {
		var b bytes.Buffer
		if json.Indent(&b, o.Value, "", "  ") == nil {
			v.Value = b.String()
		} else {
			v.Value = string(o.Value)
		}
	}
	if o.File != nil {
		v.Kept = o.File.SHA256
	}
	if o.TextFile != nil {
		v.TextKept = o.TextFile.SHA256
	}
	for _, s := range []*string{&v.Value, &v.Text} {
		if len(*s) > outputLimit {
			*s, v.Clipped = (*s)[:outputLimit], true
		}
	}
	return v
}

// decisionRow is an answer given at one of the flow's gates.
type decisionRow struct {
	Step, Answer, By, Reason string
	At                       time.Time
}

// Decisions are the answers given at the flow's gates (sdk.Flow.Decisions),
// by step.
func (p flowPage) Decisions() []decisionRow {
	out := make([]decisionRow, 0, len(p.Flow.Decisions))
	for step, d := range p.Flow.Decisions {
		row := decisionRow{Step: step, By: d.By, Reason: d.Reason, At: d.At}
		switch {
		case d.Approved != nil && *d.Approved:
			row.Answer = "approved"
		case d.Approved != nil:
			row.Answer = "denied"
		default:
			row.Answer = string(d.Response)
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Step < out[j].Step })
	return out
}
