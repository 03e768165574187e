package audit

import (
	"strings"

	"github.com/flowgate/flowgate/host/engine"
)

// auditIndexes reports every index entry without its record and every
// record without its entry (engine.CheckIndexes). Damaged records are
// damaged_record's (from the listings), and so are the entries that point
// at them.
func (a *auditor) auditIndexes() error {
	problems, err := a.eng.CheckIndexes()
	if err != nil {
		return err
	}
	damaged := map[string]bool{}
	for _, p := range problems {
		if p.Kind == engine.RecordDamaged {
			damaged[p.Record] = true
		}
	}
	for _, p := range problems {
		if p.Kind == engine.RecordDamaged || damaged[p.Record] {
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

// damaged reports each record the listings skipped because it cannot be
// read or should not exist (engine.DamagedRecord) as restore_failed, the
// reference's code for task-flow records that could not be read: one
// finding per record, naming its key and what is wrong with it.
func (a *auditor) damaged(records []engine.DamagedRecord) {
	for _, d := range records {
		_, id, _ := strings.Cut(d.Key, "/")
		a.out = append(a.out, Finding{Kind: KindFlow, Severity: Error, Code: RestoreFailed, Token: id,
			Detail: "record " + d.Key + " is damaged: " + d.Reason + "; it is never indexed or acted on (flowgate tasks maintenance --apply moves it to the quarantine)"})
	}
}
