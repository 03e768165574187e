package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// DamagedRecord is a flow or task record that cannot be read (its bytes do
// not decode) or should not exist (it decodes to a record the engine never
// writes: an unknown status, no id, an id that is not its key's). The
// engine never indexes or acts on one: reads of it fail with it as the
// error, lists skip it and report it, CheckIndexes reports it as
// RecordDamaged, and Quarantine moves it out of the way.
type DamagedRecord struct {
	// Key is the record's key, e.g. "flow/<id>".
	Key string `json:"key"`
	// Reason says what is wrong with it.
	Reason string `json:"reason"`
}

// Error names the record, what is wrong with it, and what to run.
func (d *DamagedRecord) Error() string {
	return fmt.Sprintf("record %s is damaged: %s (flowgate check lists it; flowgate tasks maintenance --apply moves it to the quarantine)", d.Key, d.Reason)
}

// damaged returns the *DamagedRecord err is or wraps, or nil.
func damaged(err error) *DamagedRecord {
	var d *DamagedRecord
	if errors.As(err, &d) {
		return d
	}
	return nil
}

// validate refuses a decoded record the engine could not have written.
// Only flows and tasks are checked; other types pass.
func validate(key string, v any) error {
	id := lastSegment(key)
	switch r := v.(type) {
	case *sdk.Flow:
		switch {
		case r.ID != id:
			return fmt.Errorf("its id is %q, not %q as its key says", r.ID, id)
		case !r.Status.Valid():
			return fmt.Errorf("status %q is not a flow status (%s)", r.Status, strings.Join(statusNames(sdk.FlowStatuses()), ", "))
		case r.SyncMode != sdk.SyncManaged && r.SyncMode != sdk.SyncTaskMirrored:
			return fmt.Errorf("sync mode %q is neither %s nor %s", r.SyncMode, sdk.SyncManaged, sdk.SyncTaskMirrored)
		case r.SyncMode == sdk.SyncManaged && r.ControllerID == "":
			return errors.New("a managed flow without a controller id")
		}
	case *stored.Task:
		switch {
		case r.ID != id:
			return fmt.Errorf("its id is %q, not %q as its key says", r.ID, id)
		case r.FlowID == "":
			return errors.New("a task without a flow id")
		case !r.Status.Valid():
			return fmt.Errorf("status %q is not a task status (%s)", r.Status, strings.Join(statusNames(sdk.TaskStatuses()), ", "))
		}
	}
	return nil
}

func statusNames[S ~string](ss []S) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// Quarantined is one record in the quarantine.
type Quarantined struct {
	// Key is where the record was, e.g. "flow/<id>".
	Key string `json:"key"`
	// Reason is why it was moved (DamagedRecord.Reason).
	Reason string `json:"reason"`
	// At is when it was moved.
	At time.Time `json:"quarantined_at"`
	// Value is the record's bytes as they were (base64 in JSON).
	Value []byte `json:"value"`
	// DroppedEvents counts the undelivered events of a quarantined flow,
	// deleted with it: no controller can act on a flow that is gone.
	DroppedEvents int `json:"dropped_events,omitempty"`
}

// Quarantine moves the damaged flow or task record at key to the
// quarantine, in one transaction: it re-reads the record and refuses
// (sdk.ErrInvalid, nothing changed) when it is not under flow/ or task/ or
// is no longer damaged, and ErrNotFound when it is gone. A flow's event
// outbox is deleted with it (counted in DroppedEvents), and so are its
// history and the values it kept (Keep), which no one could read or
// prune without the flow. The index entries
// that pointed at the record are orphans afterwards, which RepairIndexes
// removes; a quarantined flow's tasks are left dangling, as after a manual
// delete, and are pruned as such.
func (e *Engine) Quarantine(key string) (Quarantined, error) {
	var out Quarantined
	err := e.write(func(t *txn) error {
		if !strings.HasPrefix(key, flowPrefix) && !strings.HasPrefix(key, taskPrefix) {
			return invalid("only flow and task records are quarantined, not %q", key)
		}
		it, err := t.tx.Get(key)
		if errors.Is(err, store.ErrKeyNotFound) {
			return fmt.Errorf("%w: no record at %s", sdk.ErrNotFound, key)
		}
		if err != nil {
			return err
		}
		if strings.HasPrefix(key, flowPrefix) {
			_, err = decodeRecord[sdk.Flow](it)
		} else {
			_, err = decodeRecord[stored.Task](it)
		}
		d := damaged(err)
		if d == nil {
			return invalid("record %s is not damaged; it stays where it is", key)
		}
		out = Quarantined{Key: key, Reason: d.Reason, At: t.now, Value: it.Value}
		if strings.HasPrefix(key, flowPrefix) {
			if out.DroppedEvents, err = t.dropOutbox(lastSegment(key)); err != nil {
				return err
			}
			if err := t.pruneHistory(lastSegment(key)); err != nil {
				return err
			}
			if err := t.deletePrefix(keptPrefix + lastSegment(key) + "/"); err != nil {
				return err
			}
		}
		if err := t.put(quarantinePrefix+key+"/"+timeKey(t.now), out); err != nil {
			return err
		}
		return t.del(key)
	})
	return out, err
}

// dropOutbox deletes flow id's event outbox, its queue entry, sequence and stream claim, and returns how
// many events it held.
func (t *txn) dropOutbox(id string) (int, error) {
	n := 0
	if err := t.tx.Scan(eventPrefix+id+"/", store.ScanOptions{}, func(store.Item) bool {
		n++
		return true
	}); err != nil {
		return 0, err
	}
	if err := t.dropDue(id); err != nil {
		return 0, err
	}
	if err := t.deletePrefix(eventPrefix + id + "/"); err != nil {
		return 0, err
	}
	if err := t.del(streamKey(id)); err != nil {
		return 0, err
	}
	return n, t.del(seqPrefix + id)
}

// ListQuarantine returns every record in the quarantine, oldest key first.
// A quarantine entry that does not decode is returned with its raw bytes
// and a reason that says so.
func (e *Engine) ListQuarantine() ([]Quarantined, error) {
	var out []Quarantined
	err := e.view(func(tx store.ReadTx) error {
		out = nil
		return tx.Scan(quarantinePrefix, store.ScanOptions{}, func(it store.Item) bool {
			var q Quarantined
			if err := json.Unmarshal(it.Value, &q); err != nil {
				q = Quarantined{Key: it.Key, Reason: "the quarantine entry itself does not decode: " + err.Error(), Value: it.Value}
			}
			out = append(out, q)
			return true
		})
	})
	return out, err
}

// CheckRecord returns a *DamagedRecord for a stored flow or task record
// the engine would refuse to read (one that does not decode, or that it
// could not have written), nil for a sound one or a record of another
// kind. Salvage vets with it the records its page scan finds.
func CheckRecord(it store.Item) error {
	var err error
	switch {
	case strings.HasPrefix(it.Key, flowPrefix):
		_, err = scanRecord[sdk.Flow](it)
	case strings.HasPrefix(it.Key, taskPrefix):
		_, err = scanRecord[stored.Task](it)
	}
	return err
}
