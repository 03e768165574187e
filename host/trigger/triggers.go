package trigger

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// Store keys: one record per trigger by name; the delivery id → flow id
// record that deduplicates deliveries; and the accepted deliveries by
// time, newest last, for triggers runs and the run center.
const (
	defPrefix  = engine.TriggerRecords + "def/"
	seenPrefix = engine.TriggerRecords + "seen/"
	runPrefix  = engine.TriggerRecords + "run/"
)

func defKey(name string) string { return defPrefix + url.PathEscape(name) }
func seenKey(name, delivery string) string {
	return seenPrefix + url.PathEscape(name) + "/" + url.PathEscape(delivery)
}
func runsOf(name string) string { return runPrefix + url.PathEscape(name) + "/" }
func runKey(name string, at time.Time, flowID string) string {
	return fmt.Sprintf("%s%020d/%s", runsOf(name), at.UnixNano(), flowID)
}

// ErrNotFound is returned for a name that names no trigger; it matches
// sdk.ErrNotFound.
var ErrNotFound = fmt.Errorf("trigger %w", sdk.ErrNotFound)

// Run is one accepted delivery: the flow it started.
type Run struct {
	Trigger  string    `json:"trigger"`
	Delivery string    `json:"delivery"`
	FlowID   string    `json:"flow_id"`
	At       time.Time `json:"at"`
}

// Triggers keeps triggers as engine records. It is safe for concurrent
// use.
type Triggers struct {
	eng *engine.Engine
	now func() time.Time
}

// New returns Triggers whose records eng reads and writes; a nil now is
// time.Now.
func New(eng *engine.Engine, now func() time.Time) *Triggers {
	if now == nil {
		now = time.Now
	}
	return &Triggers{eng: eng, now: now}
}

// Add validates in and stores a new trigger. A name in use is refused
// with an error matching sdk.ErrInvalid.
func (ts *Triggers) Add(in Input) (Trigger, error) {
	t, err := in.Build(ts.now())
	if err != nil {
		return Trigger{}, err
	}
	b, _ := json.Marshal(t) // a Trigger always marshals
	err = ts.eng.UpdateRecords(engine.TriggerRecords, func(tx engine.RecordTx) error {
		if _, err := tx.Get(defKey(t.Name)); err == nil {
			return fmt.Errorf("%w: a trigger named %q exists; remove it first with triggers remove %s, or pick another name", sdk.ErrInvalid, t.Name, t.Name)
		} else if !errors.Is(err, store.ErrKeyNotFound) {
			return err
		}
		return tx.Put(defKey(t.Name), b)
	})
	if err != nil {
		return Trigger{}, err
	}
	return t, nil
}

// Get returns the trigger named name, or an error matching ErrNotFound.
func (ts *Triggers) Get(name string) (Trigger, error) {
	var t Trigger
	err := ts.eng.ViewRecords(engine.TriggerRecords, func(tx engine.RecordReadTx) (err error) {
		t, err = find(tx, name)
		return err
	})
	return t, err
}

// List returns every trigger by name.
func (ts *Triggers) List() ([]Trigger, error) {
	out := []Trigger{}
	err := ts.eng.ViewRecords(engine.TriggerRecords, func(tx engine.RecordReadTx) error {
		out = out[:0]
		var derr error
		err := tx.Scan(defPrefix, store.ScanOptions{}, func(it store.Item) bool {
			var t Trigger
			if derr = json.Unmarshal(it.Value, &t); derr != nil {
				derr = fmt.Errorf("read %s: %w", it.Key, derr)
				return false
			}
			out = append(out, t)
			return true
		})
		if err == nil {
			err = derr
		}
		return err
	})
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, err
}

// SetEnabled enables or disables the trigger named name, recording by as
// who did it in its LastToggle; a disabled trigger answers 404 to
// deliveries, as if it did not exist. A trigger already in the state
// asked for is returned unchanged.
func (ts *Triggers) SetEnabled(name string, enabled bool, by string) (Trigger, error) {
	var out Trigger
	now := ts.now().UTC()
	err := ts.eng.UpdateRecords(engine.TriggerRecords, func(tx engine.RecordTx) error {
		t, err := find(tx, name)
		if err != nil || t.Enabled == enabled {
			out = t
			return err
		}
		t.Enabled, t.UpdatedAt = enabled, now
		t.LastToggle = &Toggle{Enabled: enabled, By: by, At: now}
		b, _ := json.Marshal(t)
		out = t
		return tx.Put(defKey(t.Name), b)
	})
	return out, err
}

// Remove deletes the trigger named name with its delivery records, and
// returns it as it was. The flows it started stay.
func (ts *Triggers) Remove(name string) (Trigger, error) {
	var out Trigger
	err := ts.eng.UpdateRecords(engine.TriggerRecords, func(tx engine.RecordTx) error {
		t, err := find(tx, name)
		if err != nil {
			return err
		}
		var keys []string
		for _, p := range []string{seenPrefix + url.PathEscape(name) + "/", runsOf(name)} {
			if err := tx.Scan(p, store.ScanOptions{}, func(it store.Item) bool { keys = append(keys, it.Key); return true }); err != nil {
				return err
			}
		}
		out = t
		for _, k := range append(keys, defKey(name)) {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// Runs returns up to limit accepted deliveries of the trigger named name,
// newest first; limit zero means all.
func (ts *Triggers) Runs(name string, limit int) ([]Run, error) {
	out := []Run{}
	err := ts.eng.ViewRecords(engine.TriggerRecords, func(tx engine.RecordReadTx) error {
		out = out[:0]
		if _, err := find(tx, name); err != nil {
			return err
		}
		var derr error
		err := tx.Scan(runsOf(name), store.ScanOptions{Reverse: true, Limit: limit}, func(it store.Item) bool {
			var r Run
			if derr = json.Unmarshal(it.Value, &r); derr != nil {
				derr = fmt.Errorf("read %s: %w", it.Key, derr)
				return false
			}
			out = append(out, r)
			return true
		})
		if err == nil {
			err = derr
		}
		return err
	})
	return out, err
}

// find reads the trigger named name.
func find(tx engine.RecordReadTx, name string) (Trigger, error) {
	it, err := tx.Get(defKey(name))
	if errors.Is(err, store.ErrKeyNotFound) || errors.Is(err, store.ErrEmptyKey) {
		return Trigger{}, fmt.Errorf("%w: no trigger is named %q; see triggers list", ErrNotFound, name)
	}
	if err != nil {
		return Trigger{}, err
	}
	var t Trigger
	if err := json.Unmarshal(it.Value, &t); err != nil {
		return Trigger{}, fmt.Errorf("read %s: %w", it.Key, err)
	}
	return t, nil
}
