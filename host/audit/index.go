package audit

import (
	"strings"

	"github.com/flowgate/flowgate/host/engine"
)

// auditIndexes reports every index entry without its record and every
// record without its entry (engine.CheckIndexes). Records that do not
// decode are restore_failed's, and so are the entries that point at them.
func (a *auditor) auditIndexes() error {
	problems, err := a.eng.CheckIndexes()
	if err != nil {
		return err
	}
	unreadable := map[string]bool{}
	for _, p := range problems {
		if p.Kind == engine.IndexUnreadable {
			unreadable[p.Record] = true
		}
	}
	for _, p := range problems {
		if p.Kind == engine.IndexUnreadable || unreadable[p.Record] {
			continue
		}
		f := Finding{Kind: KindFlow, Severity: Error, Code: IndexMismatch, Detail: p.Kind + " index entry " + p.Key + ": " + p.Detail}
		kind, id, _ := strings.Cut(p.Record, "/")
		f.Token = id
		if kind == "task" {
			f.Kind = KindTask
			if t := a.tasks[id]; t != nil {
				f.Task, f.Status = t, string(t.Status)
			}
		} else if fl := a.flows[id]; fl != nil {
			f.Flow, f.Status = fl, string(fl.Status)
		}
		if f.Token == "" {
			f.Token = p.Key
		}
		a.out = append(a.out, f)
	}
	return nil
}
