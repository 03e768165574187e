package scheduler

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// Store keys: one record per job; an index from name to id that keeps
// names unique; and an index of enabled jobs by next run, so that finding
// the jobs due reads only those, however many jobs there are.
const (
	jobPrefix  = "cron/job/"
	namePrefix = "cron/name/"
	duePrefix  = "cron/due/"
)

func jobKey(id string) string    { return jobPrefix + id }
func nameKey(name string) string { return namePrefix + url.PathEscape(name) }

// dueKey is j's entry in the due index: its next run in Unix nanoseconds,
// zero-padded so keys sort by time, then its id. A job that will not fire
// (disabled, or no next run) has none: the empty key.
func dueKey(j Job) string {
	if !j.Enabled || j.State.NextRun.IsZero() {
		return ""
	}
	return fmt.Sprintf("%s%020d/%s", duePrefix, j.State.NextRun.UnixNano(), j.ID)
}

// ErrJobNotFound is returned for an id or name that names no job. It
// matches sdk.ErrNotFound.
var ErrJobNotFound = fmt.Errorf("cron job %w", sdk.ErrNotFound)

// NameTakenError refuses a second job with a name already in use. It
// matches sdk.ErrInvalid.
type NameTakenError struct {
	// Name is the name asked for; ID is the job that has it.
	Name, ID string
}

// Error says which job has the name and what to do instead.
func (e *NameTakenError) Error() string {
	return fmt.Sprintf("--name: a job named %q exists (id %s); use cron edit %s to change it", e.Name, e.ID, e.ID)
}

// Is reports whether target is sdk.ErrInvalid.
func (e *NameTakenError) Is(target error) bool { return target == sdk.ErrInvalid }

// JobsConfig configures Jobs. The zero value is ready to use.
type JobsConfig struct {
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Rand is the entropy for job ids. Nil means crypto/rand.Reader.
	Rand io.Reader
	// Dests checks the destination specs a job names. Nil refuses a job
	// that names any.
	Dests Destinations
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c JobsConfig) WithDefaults() JobsConfig {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	return c
}

// Jobs keeps scheduled jobs as engine records (engine.CronRecords). It is
// safe for concurrent use.
type Jobs struct {
	eng   *engine.Engine
	cfg   JobsConfig
	zones *schedule.Zones // shared by every schedule these jobs compute
}

// NewJobs returns Jobs whose records eng reads and writes.
func NewJobs(eng *engine.Engine, cfg JobsConfig) *Jobs {
	return &Jobs{eng: eng, cfg: cfg.WithDefaults(), zones: new(schedule.Zones)}
}

// op is one write of a Jobs transaction; a nil val deletes key.
type op struct {
	key string
	val []byte
}

// write runs fn in one engine transaction and applies the writes it
// returns. fn only reads, so a refusal it returns comes before any write
// and is reported without rolling back writers grouped into the same
// commit; it may run more than once.
func (js *Jobs) write(fn func(tx engine.RecordReadTx) (Job, []op, error)) (Job, error) {
	var out Job
	err := js.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		out = Job{}
		j, ops, err := fn(tx)
		if err != nil {
			return err
		}
		if err := applyOps(tx, ops); err != nil {
			return err
		}
		out = j
		return nil
	})
	return out, err
}

// applyOps makes the writes ops lists, in order.
func applyOps(tx engine.RecordTx, ops []op) error {
	for _, o := range ops {
		var err error
		if o.val == nil {
			err = tx.Delete(o.key)
		} else {
			err = tx.Put(o.key, o.val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Add validates in and stores a new job, with its first run computed. It
// returns the stored job, a *FlagError for invalid input, or a
// *NameTakenError if the name is in use.
func (js *Jobs) Add(in JobInput) (Job, error) {
	now := js.cfg.Now()
	j, err := in.Build(now)
	if err != nil {
		return Job{}, err
	}
	if err := checkDests(js.cfg.Dests, j); err != nil {
		return Job{}, err
	}
	id, err := js.newID()
	if err != nil {
		return Job{}, err
	}
	j.ID, j.CreatedAt, j.UpdatedAt = id, now, now
	j.State.NextRun = js.nextRun(j, now)
	return js.write(func(tx engine.RecordReadTx) (Job, []op, error) {
		if err := nameFree(tx, j.Name, ""); err != nil {
			return Job{}, nil, err
		}
		return j, append(putOps(tx, j), op{nameKey(j.Name), []byte(j.ID)}), nil
	})
}

// Get returns the job with id or name ref, or ErrJobNotFound.
func (js *Jobs) Get(ref string) (Job, error) {
	var j Job
	err := js.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		var err error
		j, err = find(tx, ref)
		return err
	})
	return j, err
}

// List returns the enabled jobs, or all of them when all is set, in order
// of next run (jobs that will not run last), then name.
func (js *Jobs) List(all bool) ([]Job, error) {
	var (
		out     []Job
		decodeE error
	)
	err := js.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		out, decodeE = nil, nil
		return tx.Scan(jobPrefix, store.ScanOptions{}, func(it store.Item) bool {
			var j Job
			if decodeE = json.Unmarshal(it.Value, &j); decodeE != nil {
				decodeE = fmt.Errorf("read %s: %w", it.Key, decodeE)
				return false
			}
			if all || j.Enabled {
				out = append(out, j)
			}
			return true
		})
	})
	if err == nil {
		err = decodeE
	}
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(a, b int) bool {
		na, nb := out[a].State.NextRun, out[b].State.NextRun
		if na.IsZero() != nb.IsZero() {
			return nb.IsZero()
		}
		if !na.Equal(nb) {
			return na.Before(nb)
		}
		return out[a].Name < out[b].Name
	})
	return out, nil
}

// Edit applies p to the job with id or name ref and recomputes its next
// run from now. An edit that enables or disables the job (--disabled) is
// kept in its LastToggle naming nobody, since a patch carries no name. It
// returns the stored job, ErrJobNotFound, a *FlagError or a
// *NameTakenError.
func (js *Jobs) Edit(ref string, p JobPatch) (Job, error) {
	now := js.cfg.Now()
	return js.write(func(tx engine.RecordReadTx) (Job, []op, error) {
		old, err := find(tx, ref)
		if err != nil {
			return Job{}, nil, err
		}
		s, err := patchSchedule(old.Schedule, p, now)
		if err != nil {
			return Job{}, nil, err
		}
		in := patchInput(old.input(), p)
		// Flags that fit only one kind of schedule lapse when it changes.
		if s.Kind != schedule.KindAt && p.DeleteAfterRun == nil {
			in.DeleteAfterRun = false
		}
		if s.Kind == schedule.KindAt && p.CatchUpWindow == nil {
			in.CatchUpWindow = ""
		}
		j, err := in.build(s)
		if err != nil {
			return Job{}, nil, err
		}
		if err := checkDests(js.cfg.Dests, j); err != nil {
			return Job{}, nil, err
		}
		j.ID, j.CreatedAt, j.UpdatedAt, j.State, j.LastToggle = old.ID, old.CreatedAt, now, old.State, old.LastToggle
		if j.Enabled != old.Enabled {
			j.LastToggle = &Toggle{Enabled: j.Enabled, At: now.UTC()}
		}
		j.State.NextRun = js.nextRun(j, now)
		ops := putOps(tx, j)
		if j.Name != old.Name {
			if err := nameFree(tx, j.Name, j.ID); err != nil {
				return Job{}, nil, err
			}
			ops = append(ops, op{nameKey(old.Name), nil}, op{nameKey(j.Name), []byte(j.ID)})
		}
		return j, ops, nil
	})
}

// SetEnabled enables or disables the job with id or name ref, recording
// by as who did it in the job's LastToggle. Enabling computes the next
// run from now and clears the consecutive-failure count (a job disabled
// for failing starts afresh); a one-shot whose time has passed cannot be
// enabled. A job already in the state asked for is returned unchanged.
func (js *Jobs) SetEnabled(ref string, enabled bool, by string) (Job, error) {
	now := js.cfg.Now()
	return js.write(func(tx engine.RecordReadTx) (Job, []op, error) {
		j, err := find(tx, ref)
		if err != nil || j.Enabled == enabled {
			return j, nil, err
		}
		j.Enabled, j.UpdatedAt = enabled, now
		j.LastToggle = &Toggle{Enabled: enabled, By: by, At: now.UTC()}
		j.State.NextRun = js.nextRun(j, now)
		if enabled {
			if j.State.NextRun.IsZero() && j.Schedule.Kind == schedule.KindAt {
				return Job{}, nil, fmt.Errorf("%w: job %s (%s) ran or was due at %s, which has passed; give it a new time with cron edit %s --at TIME",
					sdk.ErrInvalid, j.ID, j.Name, j.Schedule.At.UTC().Format(time.RFC3339), j.ID)
			}
			j.State.ConsecutiveErrors = 0
		}
		return j, putOps(tx, j), nil
	})
}

// Remove deletes the job with id or name ref and returns it as it was.
func (js *Jobs) Remove(ref string) (Job, error) {
	return js.write(func(tx engine.RecordReadTx) (Job, []op, error) {
		j, err := find(tx, ref)
		if err != nil {
			return Job{}, nil, err
		}
		return j, removeOps(tx, j), nil
	})
}

// removeOps deletes j, its index entries, and its runtime record unless
// runs of it are still open (the scheduler drops that when they end).
func removeOps(tx engine.RecordReadTx, j Job) []op {
	ops := []op{{jobKey(j.ID), nil}, {nameKey(j.Name), nil}}
	if k := dueKey(j); k != "" {
		ops = append(ops, op{k, nil})
	}
	if rec, err := loadSched(tx, j.ID); err == nil && !rec.open() {
		ops = append(ops, op{schedKey(j.ID), nil}, op{openKey(j.ID), nil})
	}
	return ops
}

// newID returns 12 random hex digits.
func (js *Jobs) newID() (string, error) {
	var b [6]byte
	if _, err := io.ReadFull(js.cfg.Rand, b[:]); err != nil {
		return "", fmt.Errorf("make job id: entropy source failed: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// nextRun is when j fires next after now: zero if disabled or never.
func (js *Jobs) nextRun(j Job, now time.Time) time.Time {
	if !j.Enabled {
		return time.Time{}
	}
	return js.scheduleOf(j).Next(now)
}

// scheduleOf is j's schedule, reading its zone through the Jobs' cache.
func (js *Jobs) scheduleOf(j Job) schedule.Schedule {
	s := j.FireSchedule()
	s.Zones = js.zones
	return s
}

// putOps writes j and moves its entry in the due index from where the
// stored record had it.
func putOps(tx engine.RecordReadTx, j Job) []op {
	b, _ := json.Marshal(j) // a Job always marshals
	ops := []op{{jobKey(j.ID), b}}
	var old Job
	if ok, err := getJSON(tx, jobKey(j.ID), &old); err == nil && ok {
		if k := dueKey(old); k != "" && k != dueKey(j) {
			ops = append(ops, op{k, nil})
		}
	}
	if k := dueKey(j); k != "" {
		ops = append(ops, op{k, []byte{}})
	}
	return ops
}

// putJob writes j with its due index entry.
func putJob(tx engine.RecordTx, j Job) error { return applyOps(tx, putOps(tx, j)) }

// find resolves ref as an id, then as a name.
func find(tx engine.RecordReadTx, ref string) (Job, error) {
	it, err := tx.Get(jobKey(ref))
	if errors.Is(err, store.ErrKeyNotFound) && ref != "" {
		var idx store.Item
		if idx, err = tx.Get(nameKey(ref)); err == nil {
			it, err = tx.Get(jobKey(string(idx.Value)))
		}
	}
	if errors.Is(err, store.ErrKeyNotFound) || errors.Is(err, store.ErrEmptyKey) {
		return Job{}, fmt.Errorf("%w: no job has id or name %q; see cron list --all", ErrJobNotFound, ref)
	}
	if err != nil {
		return Job{}, err
	}
	var j Job
	if err := json.Unmarshal(it.Value, &j); err != nil {
		return Job{}, fmt.Errorf("read %s: %w", it.Key, err)
	}
	return j, nil
}

// nameFree refuses name if a job other than self has it.
func nameFree(tx engine.RecordReadTx, name, self string) error {
	it, err := tx.Get(nameKey(name))
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if id := string(it.Value); id != self {
		return &NameTakenError{Name: name, ID: id}
	}
	return nil
}
