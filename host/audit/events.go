package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// backlog is a flow's oldest undelivered event and how many are waiting.
type backlog struct {
	head  *sdk.Event
	count int
}

func (b backlog) detail() string {
	d := fmt.Sprintf("%d undelivered controller event(s); the oldest, %s (event %d), is waiting since %s",
		b.count, b.head.Type, b.head.Seq, b.head.CreatedAt.UTC().Format(time.RFC3339))
	if b.head.LastError != "" {
		d += "; last delivery failed: " + b.head.LastError
	}
	return d
}

// readEvents reads the outbox of every managed flow: each flow's oldest
// event (for events_backlog) and the parked events of tasks (for
// delivery_failed). When the outbox is empty, as it is on a quiet
// system, one scan of it says so and no flow is read.
func (a *auditor) readEvents(ctx context.Context, flows []*sdk.Flow) error {
	a.parked, a.oldest = map[string]*sdk.Event{}, map[string]backlog{}
	if pending, err := a.eng.PendingEvents(); err == nil {
		total := 0
		for _, n := range pending {
			total += n
		}
		if total == 0 {
			return nil
		}
	}
	for i, f := range flows {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if f.SyncMode != sdk.SyncManaged {
			continue
		}
		evs, err := a.eng.Events(f.ID)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			continue
		}
		a.oldest[f.ID] = backlog{head: evs[0], count: len(evs)}
		for _, ev := range evs {
			if ev.Parked && ev.TaskID != "" {
				a.parked[ev.TaskID] = ev
			}
		}
	}
	return nil
}
