package cli

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// agentRows adds to tasks show what the agent resilience records: whether
// the child started, the give-up, the attempt log and where finish
// notices go.
func agentRows(row func(k, v string), t *apitype.Task) {
	if t.Status.Active() && t.PID == 0 && t.Progress == nil {
		row("child", "not started yet: it has recorded nothing so far")
	}
	if in := t.Interrupted; in != nil {
		child := "child stopped; its real end is still recorded"
		switch {
		case t.Status.Terminal():
			child = "child ended since: its real end is the status above"
		case in.ChildStillRunning:
			child = "child still running; its real end is still recorded"
		}
		row("interrupted", fmt.Sprintf("%s at %s, %s", in.Reason, stamp(in.At), child))
	}
	for _, a := range t.AttemptLog {
		var parts []string
		if a.Class != "" {
			parts = append(parts, "failed: "+string(a.Class))
		}
		if a.Offline > 0 {
			parts = append(parts, "offline "+time.Duration(a.Offline).Round(time.Millisecond).String())
		}
		if a.Resumed {
			parts = append(parts, "resumed after a network check")
		}
		row(fmt.Sprintf("attempt %d", a.Attempt), strings.Join(parts, ", "))
	}
	if n := t.Spec.OnFinish; n != nil {
		to := clean(n.Command)
		if n.Webhook != "" {
			to = strings.TrimSpace(to + " " + clean(redactURL(n.Webhook)))
		}
		row("onFinish", to)
	}
	if t.Spec.NotifyPolicy != "" || len(t.Spec.NotifyTo) > 0 {
		notifyRows(row, t.Spec.NotifyPolicy, t.Spec.NotifyTo, t.Spec.NotifyTemplate)
	}
	if len(t.Spec.NotifyOnMilestone) > 0 {
		row("notifyOnMilestone", clean(strings.Join(t.Spec.NotifyOnMilestone, ", ")))
	}
}

// redactURL hides the password of a URL, as errors and logs do.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return u.Redacted()
}
