package engine

import (
	"fmt"
	"net/url"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Key layout. Records live under flow/ and task/; secondary indexes under
// idx/ hold empty values and are written in the same transaction as their
// record. Damaged records are moved under quarantine/, keyed by their old
// key and the time they were moved, so moving one key twice keeps both. User-supplied parts (owner keys, controller ids, idempotency keys)
// are path-escaped so a '/' in them cannot forge another key.
const (
	flowPrefix  = "flow/"
	taskPrefix  = "task/"
	eventPrefix = "event/"
	seqPrefix   = "eventseq/"

	quarantinePrefix = "quarantine/"

	idxFlowStatus     = "idx/flow/status/"
	idxFlowOwner      = "idx/flow/owner/"
	idxFlowController = "idx/flow/controller/"
	idxFlowEnded      = "idx/flow/ended/"
	idxTaskFlow       = "idx/task/flow/"
	idxTaskStatus     = "idx/task/status/"
	idxTaskOwner      = "idx/task/owner/"
	idxTaskEnded      = "idx/task/ended/"
	idxTaskIdem       = "idx/task/idem/"
	idxFlowIdem       = "idx/flow/idem/"
	idxFlowCreated    = "idx/flow/created/"
)

func esc(s string) string { return url.PathEscape(s) }

func flowKey(id string) string { return flowPrefix + id }
func taskKey(id string) string { return taskPrefix + id }

// idemKey maps an idempotency key to the task id that claimed it.
func idemKey(k string) string { return idxTaskIdem + esc(k) }

// flowIdemKey maps a controller's Host.CreateFlow idempotency key to the
// flow it made: keys are per controller, so one controller's key never
// names another's flow.
func flowIdemKey(controller, k string) string {
	return idxFlowIdem + esc(controller) + "/" + esc(k)
}

// timeKey renders t so that keys sort by time.
func timeKey(t time.Time) string { return fmt.Sprintf("%020d", t.UnixNano()) }

// scanDue calls fn, in time order, for each entry of the time-keyed queue
// under prefix ("<prefix><timeKey>/...") due at or before now, until fn
// returns false.
func scanDue(tx store.ReadTx, prefix string, now time.Time, fn func(store.Item) bool) error {
	end := prefix + timeKey(now) + "0" // sorts after every entry at or before now
	return tx.Scan(prefix, store.ScanOptions{}, func(it store.Item) bool {
		return it.Key < end && fn(it)
	})
}

func eventKey(flowID string, seq int64) string {
	return fmt.Sprintf("%s%s/%020d", eventPrefix, flowID, seq)
}

// flowIndexKeys lists the index entries a flow record must have.
func flowIndexKeys(f *sdk.Flow) []string {
	keys := []string{
		idxFlowStatus + string(f.Status) + "/" + f.ID,
		idxFlowOwner + esc(f.OwnerKey) + "/" + f.ID,
	}
	if f.ControllerID != "" {
		keys = append(keys, idxFlowController+esc(f.ControllerID)+"/"+f.ID)
	}
	if !f.EndedAt.IsZero() {
		keys = append(keys, idxFlowEnded+timeKey(f.EndedAt)+"/"+f.ID)
	}
	if f.IdempotencyKey != "" && !f.Status.Terminal() {
		keys = append(keys, createdKey(f.ControllerID)+f.ID)
	}
	return keys
}

// createdKey is the prefix of the index of a controller's active flows
// that it created itself (Host.CreateFlow): its admission counts them
// there, in one range, without reading a record.
func createdKey(controller string) string { return idxFlowCreated + esc(controller) + "/" }

// taskIndexKeys lists the index entries a task record must have. The
// idempotency entry is not among them: it maps to the task id and is
// written once, at create.
func taskIndexKeys(t *stored.Task) []string {
	keys := []string{
		idxTaskFlow + t.FlowID + "/" + t.ID,
		idxTaskStatus + string(t.Status) + "/" + t.ID,
		idxTaskOwner + esc(t.OwnerKey) + "/" + t.ID,
	}
	if !t.EndedAt.IsZero() {
		keys = append(keys, idxTaskEnded+timeKey(t.EndedAt)+"/"+t.ID)
	}
	return keys
}

// reindex removes the entries of old that next no longer has and adds the
// entries of next. old is nil for a new record; next is nil for a deletion.
func (t *txn) reindex(old, next []string) error {
	want := make(map[string]bool, len(next))
	for _, k := range next {
		want[k] = true
	}
	for _, k := range old {
		if !want[k] {
			if err := t.del(k); err != nil {
				return err
			}
		}
		delete(want, k)
	}
	for _, k := range next {
		if want[k] {
			if err := t.putRaw(k, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
