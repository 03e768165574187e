package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// usageText renders reported usage; "none reported" for nil, never zero.
func usageText(u *sdk.Usage) string {
	if u == nil {
		return "none reported"
	}
	s := fmt.Sprintf("%d tokens (%d in, %d out) from %d reports", u.Tokens(), u.InputTokens, u.OutputTokens, u.TokenReports)
	if u.CostReports > 0 {
		s += fmt.Sprintf(" · cost %s from %d reports", strconv.FormatFloat(u.Cost, 'f', -1, 64), u.CostReports)
	}
	return s
}

// budgetText renders a chain's budget.
func budgetText(b *sdk.Budget) string {
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

// recoveryRows adds the rows of tasks show about how the task's failures
// were judged: the class, the diagnosis and the usage.
func recoveryRows(row func(k, v string), t *sdk.Task) {
	if t.Class != "" {
		row("class", string(t.Class))
	}
	if t.InPlaceRetried {
		row("inPlaceRetry", "used (one per node per run)")
	}
	if d := t.Diagnosis; d != nil {
		line := fmt.Sprintf("attempt %d: %s", d.Attempt, d.State)
		if d.Recommendation != "" {
			line += ", recommends " + string(d.Recommendation)
		}
		row("diagnosis", line)
		if d.Action != "" {
			row("diagnosisAction", clean(d.Action))
		}
		if d.Evidence != "" {
			row("evidence", clean(d.Evidence))
		}
		if d.Uncertainty != "" {
			row("uncertainty", clean(d.Uncertainty))
		}
		if d.Error != "" {
			row("diagnosisError", clean(d.Error))
		}
	}
	if t.Usage != nil {
		row("usage", usageText(t.Usage))
	}
}

// usageRows adds the rows of tasks flow show about the flow's usage and
// its chain's usage, budget and stop marks.
func usageRows(row func(k, v string), v engine.FlowView) {
	row("usage", usageText(v.RunUsage))
	if v.UsageBeforeRun != nil {
		row("usageBeforeRun", usageText(v.UsageBeforeRun))
	}
	c := v.ChainState
	if c == nil {
		return
	}
	if c.Usage != nil && *c.Usage != *orZero(v.RunUsage) {
		row("chainUsage", usageText(c.Usage))
	}
	if c.Budget != nil {
		row("budget", budgetText(c.Budget))
	}
	if why := c.Halted(); why != "" {
		row("halted", clean(why))
	}
}

func orZero(u *sdk.Usage) *sdk.Usage {
	if u == nil {
		return &sdk.Usage{}
	}
	return u
}

// writeDiagnosisLine prints the one line tasks flow show gives a linked
// task's diagnosis, if it has one.
func writeDiagnosisLine(w io.Writer, t *sdk.Task) {
	if d := t.Diagnosis; d != nil {
		fmt.Fprintf(w, "    diagnosis: %s %s (%s)\n", d.State, d.Recommendation, clip(d.Action, 80))
	}
}

// withoutFlowEvidence drops the raw diagnosis evidence from the tasks of
// views, for list views, leaving the tasks the views shared untouched.
func withoutFlowEvidence(views []engine.FlowView) {
	for i := range views {
		views[i].Tasks = slices.Clone(views[i].Tasks)
		for j, t := range views[i].Tasks {
			views[i].Tasks[j] = withoutEvidence(t)
		}
	}
}

// withoutEvidence returns t without its diagnosis's raw evidence, for
// list views; tasks show prints it.
func withoutEvidence(t *sdk.Task) *sdk.Task {
	if t == nil || t.Diagnosis == nil || t.Diagnosis.Evidence == "" {
		return t
	}
	c := *t
	d := *t.Diagnosis
	d.Evidence = ""
	c.Diagnosis = &d
	return &c
}
