package sdk

import (
	"fmt"
	"strconv"
)

// String says what u counts, for people: "none reported" for nil, never
// a zero that would read as nothing used. `tasks flow show` and the run
// center's chain panel both write usage so.
func (u *Usage) String() string {
	if u == nil {
		return "none reported"
	}
	s := fmt.Sprintf("%d tokens (%d in, %d out) from %d reports", u.Tokens(), u.InputTokens, u.OutputTokens, u.TokenReports)
	if u.CostReports > 0 {
		s += fmt.Sprintf(" · cost %s from %d reports", strconv.FormatFloat(u.Cost, 'f', -1, 64), u.CostReports)
	}
	return s
}

// String says what b limits, for people.
func (b *Budget) String() string {
	s := ""
	if b.Tokens > 0 {
		s = fmt.Sprintf("%d tokens", b.Tokens)
	}
	if b.Cost > 0 {
		if s != "" {
			s += " · "
		}
		s += "cost " + strconv.FormatFloat(b.Cost, 'f', -1, 64)
	}
	return s + " (soft: counts reported usage only)"
}
