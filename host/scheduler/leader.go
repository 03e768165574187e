package scheduler

import (
	"fmt"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// Leader says whether this scheduler leads the installation's cron, and
// fences its records of scheduled times (see store.Fence). Several
// gateways on one etcd installation each campaign (etcd.Leadership); one
// fires.
type Leader interface {
	// Fence returns the leadership's fence, and false when this
	// scheduler does not lead.
	Fence() (store.Fence, bool)
}

// Leads says whether a loop confined to l's leader runs now: always
// when l is nil (one gateway). The scheduler and the finish notifier
// both ask it.
func Leads(l Leader) bool {
	if l == nil {
		return true
	}
	_, ok := l.Fence()
	return ok
}

// leading says whether this scheduler fires scheduled times now: always
// without a Leader.
func (s *Scheduler) leading() bool { return Leads(s.cfg.Leader) }

// updateScheduled writes the record of a scheduled time (a claim, a
// missed time, the next run): fenced on the leadership when there is a
// Leader, so that a scheduler deposed since it looked cannot record a
// fire. Not leading (any more) fails it with an error wrapping
// store.ErrFenced.
func (s *Scheduler) updateScheduled(fn func(engine.RecordTx) error) error {
	if s.cfg.Leader == nil {
		return s.eng.UpdateRecords(engine.CronRecords, fn)
	}
	f, ok := s.cfg.Leader.Fence()
	if !ok {
		return fmt.Errorf("%w: this gateway no longer leads cron; the leader fires the job", store.ErrFenced)
	}
	return s.eng.UpdateRecordsFenced(f, engine.CronRecords, fn)
}
