package audit

import "fmt"

// auditNotices reports each notice the deliverer gave up on
// (engine.FailedNotices): notify_failed, on its flow when it has one.
// The finding stays until the flow is pruned, as the history entry
// does, so a message nobody received is not forgotten by the next
// audit.
func (a *auditor) auditNotices() error {
	failed, err := a.eng.FailedNotices()
	if err != nil {
		return err
	}
	for _, n := range failed {
		f := Finding{Kind: KindFlow, Severity: Warn, Code: NotifyFailed, AgeMS: ageSince(a.now, n.FailedAt), Token: n.FlowID,
			Detail: fmt.Sprintf("notice %s (%s) to %s was given up after %d attempts: %s", n.Key, orNone(n.Event), n.Dest, n.Attempts, orNone(n.LastError))}
		if fl := a.flows[n.FlowID]; fl != nil {
			f.Flow, f.Status = fl, string(fl.Status)
		} else if n.FlowID == "" {
			f.Token = n.Key
		}
		a.out = append(a.out, f)
	}
	return nil
}
