package scheduler

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// Reconcile makes the jobs declared in the gateway config exist in the
// store, matched by name: a missing job is added, a job whose definition
// differs is rewritten in place (same id, history and runtime state; its
// next run recomputed), and a job that already matches is left alone, so a
// restart or an upgrade never duplicates a declared job. Jobs added with
// the CLI are not touched. It returns how many jobs it added and changed.
func (js *Jobs) Reconcile(declared []JobInput) (added, changed int, err error) {
	seen := map[string]bool{}
	for _, in := range declared {
		if seen[in.Name] {
			return added, changed, fmt.Errorf("%w: cron: the job %q is declared twice", sdk.ErrInvalid, in.Name)
		}
		seen[in.Name] = true
		now := js.cfg.Now()
		want, err := in.Build(now)
		if err != nil {
			return added, changed, fmt.Errorf("cron job %q: %w", in.Name, err)
		}
		var old Job
		if verr := js.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
			old, err = find(tx, in.Name)
			return nil
		}); verr != nil {
			return added, changed, verr
		}
		switch {
		case errors.Is(err, ErrJobNotFound):
			if _, err := js.Add(in); err != nil {
				return added, changed, fmt.Errorf("cron job %q: %w", in.Name, err)
			}
			added++
			continue
		case err != nil:
			return added, changed, err
		}
		if sameDefinition(old, want) {
			continue
		}
		if _, err := js.write(func(tx engine.RecordReadTx) (Job, []op, error) {
			cur, err := find(tx, old.ID)
			if err != nil {
				return Job{}, nil, err
			}
			j := want
			if j.Schedule.Kind == cur.Schedule.Kind && j.Schedule.Every == cur.Schedule.Every {
				j.Schedule.Anchor = cur.Schedule.Anchor // an unchanged interval keeps its rhythm
			}
			j.ID, j.CreatedAt, j.UpdatedAt, j.State, j.LastToggle = cur.ID, cur.CreatedAt, now, cur.State, cur.LastToggle
			if j.Enabled != cur.Enabled {
				j.LastToggle = &Toggle{Enabled: j.Enabled, By: ByConfig, At: now.UTC()}
			}
			j.State.NextRun = js.nextRun(j, now)
			return j, putOps(tx, j), nil
		}); err != nil {
			return added, changed, fmt.Errorf("cron job %q: %w", in.Name, err)
		}
		changed++
	}
	return added, changed, nil
}

// sameDefinition reports whether two jobs define the same thing: all but
// their identity, timestamps, runtime state, interval anchor and who last
// enabled or disabled them.
func sameDefinition(a, b Job) bool {
	strip := func(j Job) []byte {
		j.ID, j.State, j.LastToggle = "", JobState{}, nil
		j.CreatedAt, j.UpdatedAt, j.Schedule.Anchor = time.Time{}, time.Time{}, time.Time{}
		b, _ := json.Marshal(j) // a Job always marshals
		return b
	}
	return string(strip(a)) == string(strip(b))
}
