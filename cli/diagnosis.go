package cli

import (
	"fmt"
	"io"
	"slices"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// recoveryRows adds the rows of tasks show about how the task's failures
// were judged: the class, the diagnosis and the usage.
func recoveryRows(row func(k, v string), t *apitype.Task) {
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
		row("usage", t.Usage.String())
	}
}

// usageRows adds the rows of tasks flow show about the flow's usage and
// its chain's usage, budget and stop marks.
func usageRows(row func(k, v string), v apitype.FlowView) {
	row("usage", v.RunUsage.String())
	if v.UsageBeforeRun != nil {
		row("usageBeforeRun", v.UsageBeforeRun.String())
	}
	c := v.ChainState
	if c == nil {
		return
	}
	if c.Usage != nil && *c.Usage != *orZero(v.RunUsage) {
		row("chainUsage", c.Usage.String())
	}
	if c.Budget != nil {
		row("budget", c.Budget.String())
	}
	if why := api.ChainHalted(c); why != "" {
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
func writeDiagnosisLine(w io.Writer, t *apitype.Task) {
	if d := t.Diagnosis; d != nil {
		fmt.Fprintf(w, "    diagnosis: %s %s (%s)\n", d.State, d.Recommendation, clip(d.Action, 80))
	}
}

// withoutFlowEvidence drops the raw diagnosis evidence from the tasks of
// views, for list views, leaving the tasks the views shared untouched.
func withoutFlowEvidence(views []apitype.FlowView) {
	for i := range views {
		views[i].Tasks = slices.Clone(views[i].Tasks)
		for j, t := range views[i].Tasks {
			views[i].Tasks[j] = withoutEvidence(t)
		}
	}
}

// withoutEvidence returns t without its diagnosis's raw evidence, for
// list views; tasks show prints it.
func withoutEvidence(t *apitype.Task) *apitype.Task {
	if t == nil || t.Diagnosis == nil || t.Diagnosis.Evidence == "" {
		return t
	}
	c := *t
	d := *t.Diagnosis
	d.Evidence = ""
	c.Diagnosis = &d
	return &c
}
