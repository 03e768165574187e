package cli

import (
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
)

// Show output never prints a destination as stored: a URL given through
// the API may hold a literal credential, so each goes through
// dest.Redact, in text and JSON alike.

// redactDests returns to with each destination as dest.Redact shows it.
func redactDests(to []string) []string {
	if len(to) == 0 {
		return to
	}
	out := make([]string, len(to))
	for i, d := range to {
		out[i] = gateway.RedactDest(d)
	}
	return out
}

// redactTaskDests returns t with its spec's destinations redacted; t
// itself is left as it was.
func redactTaskDests(t *apitype.Task) *apitype.Task {
	if t == nil || len(t.Spec.NotifyTo) == 0 {
		return t
	}
	c := *t
	c.Spec.NotifyTo = redactDests(t.Spec.NotifyTo)
	return &c
}

// redactViewDests returns v with the destinations of its flow and tasks
// redacted; v's records are left as they were.
func redactViewDests(v apitype.FlowView) apitype.FlowView {
	if v.Flow != nil && len(v.NotifyTo) > 0 {
		f := *v.Flow
		f.NotifyTo = redactDests(f.NotifyTo)
		v.Flow = &f
	}
	tasks := make([]*apitype.Task, len(v.Tasks))
	for i, t := range v.Tasks {
		tasks[i] = redactTaskDests(t)
	}
	if v.Tasks != nil {
		v.Tasks = tasks
	}
	return v
}

// notifyRows adds the rows of a show that say where a run's notices go.
func notifyRows(row func(k, v string), policy string, to []string, template string) {
	if policy != "" {
		row("notify", policy)
	}
	if len(to) > 0 {
		row("notifyTo", clean(strings.Join(redactDests(to), " ")))
	}
	if template != "" {
		row("notifyTemplate", fmt.Sprintf("custom, %d bytes", len(template)))
	}
}
