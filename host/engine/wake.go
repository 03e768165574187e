package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// Timers. A controller asks for a flow.woken event at a time, under a key
// (sdk.Host.WakeAt). SetWake keeps "wake/<flow>/<key>" and, while the wake
// is pending, a queue entry "wakedue/<time>/<flow>/<key>", in one
// transaction (a queue, like notice/, not an idx/ index: it empties as
// wakes fire); FireWakes turns each due wake into a flow.woken event in
// the flow's outbox, in the transaction that marks it fired and drops its
// due entry. The wake record stays, fired, until the flow is pruned, so a
// key wakes its flow once however often it is asked, across restarts.
const (
	wakePrefix = "wake/"
	wakeDue    = "wakedue/"
)

// maxWakeKey bounds a wake's key, in bytes.
const maxWakeKey = 200

// wake is the record of one timer of a flow.
type wake struct {
	FlowID string    `json:"flow_id"`
	Key    string    `json:"key"`
	At     time.Time `json:"at"`
	SetAt  time.Time `json:"set_at"`
	// FiredAt is when the wake fired; zero while it is pending.
	FiredAt time.Time `json:"fired_at,omitzero"`
}

func wakeKey(flowID, key string) string { return wakePrefix + flowID + "/" + esc(key) }

func wakeDueKey(w *wake) string {
	return wakeDue + timeKey(w.At) + "/" + w.FlowID + "/" + esc(w.Key)
}

// SetWake records that managed flow flowID wants a flow.woken event (data
// sdk.Woken) at or after at, once for key. A key set before, pending or
// fired, keeps its first time: the call changes nothing and returns
// created false, so a controller may ask again on every delivery of an
// event. It refuses an empty key or one over 200 bytes (sdk.ErrInvalid),
// a missing flow (sdk.ErrNotFound), a flow that is not managed
// (sdk.ErrNotManaged) and one that has ended (sdk.ErrTerminal).
func (e *Engine) SetWake(flowID, key string, at time.Time) (created bool, err error) {
	switch {
	case key == "":
		return false, fmt.Errorf("%w: a wake needs a key; name what it is for, such as \"reminder\"", sdk.ErrInvalid)
	case len(key) > maxWakeKey:
		return false, fmt.Errorf("%w: wake key is %d bytes; keep it under %d", sdk.ErrInvalid, len(key), maxWakeKey)
	case at.IsZero():
		return false, fmt.Errorf("%w: wake %q of flow %s has no time", sdk.ErrInvalid, key, flowID)
	}
	err = e.write(func(t *txn) error {
		f, err := loadFlow(t.tx, flowID)
		if err != nil {
			return err
		}
		switch {
		case f.SyncMode != sdk.SyncManaged:
			return fmt.Errorf("%w: flow %s is %s; only a managed flow's controller sets wakes", sdk.ErrNotManaged, flowID, f.SyncMode)
		case f.Status.Terminal():
			return fmt.Errorf("%w: flow %s is already %s; a wake would never fire", sdk.ErrTerminal, flowID, f.Status)
		}
		if _, err := t.tx.Get(wakeKey(flowID, key)); err == nil {
			return nil
		} else if !errors.Is(err, store.ErrKeyNotFound) {
			return err
		}
		w := &wake{FlowID: flowID, Key: key, At: at.UTC().Truncate(time.Microsecond), SetAt: t.now}
		if err := t.put(wakeKey(flowID, key), w); err != nil {
			return err
		}
		if err := t.putRaw(wakeDueKey(w), nil); err != nil {
			return err
		}
		created = true
		return t.recordData(flowID, HistoryEntry{Kind: HistoryTimerSet, Summary: fmt.Sprintf("wake %q set for %s", key, w.At.Format(time.RFC3339))},
			map[string]any{"key": key, "at": w.At})
	})
	return created, err
}

// wakeBatch bounds the wakes one transaction fires: each writes about
// eight keys, and etcd takes at most 128 operations in one transaction.
const wakeBatch = 12

// FireWakes fires the wakes due at the engine's clock, earliest first, at
// most limit of them (0: all): each becomes a flow.woken event of its
// flow, with sdk.Woken as its data, in the transaction that marks it
// fired, wakeBatch wakes a transaction. The wake of a flow that has ended
// fires without an event. It returns how many events it queued. When
// nothing is due it only reads, so calling it on every poll costs no
// commit.
func (e *Engine) FireWakes(limit int) (int, error) {
	queued := 0
	for fired := 0; limit <= 0 || fired < limit; {
		n := wakeBatch
		if limit > 0 {
			n = min(n, limit-fired)
		}
		got, q, err := e.fireWakeBatch(n)
		queued += q
		if err != nil || got < n {
			return queued, err
		}
		fired += got
	}
	return queued, nil
}

// fireWakeBatch fires up to n due wakes in one transaction. It returns
// how many it fired and how many events those queued.
func (e *Engine) fireWakeBatch(n int) (fired, queued int, err error) {
	var due []string
	err = e.view(func(tx store.ReadTx) error {
		var err error
		due, err = dueWakes(tx, e.now(), n)
		return err
	})
	if err != nil || len(due) == 0 {
		return 0, 0, err
	}
	err = e.write(func(t *txn) error {
		fired, queued = 0, 0
		due, err := dueWakes(t.tx, t.now, n)
		if err != nil {
			return err
		}
		for _, k := range due {
			ok, err := t.fireWake(k)
			if err != nil {
				return err
			}
			if ok {
				queued++
			}
		}
		fired = len(due)
		return nil
	})
	return fired, queued, err
}

// dueWakes lists the queue entries of the wakes due at now, earliest
// first, at most limit (0: all).
func dueWakes(tx store.ReadTx, now time.Time, limit int) ([]string, error) {
	var due []string
	err := scanDue(tx, wakeDue, now, func(it store.Item) bool {
		due = append(due, it.Key)
		return limit <= 0 || len(due) < limit
	})
	return due, err
}

// fireWake fires the wake whose due entry is dueKey and reports whether
// it queued an event.
func (t *txn) fireWake(dueKey string) (bool, error) {
	if err := t.del(dueKey); err != nil {
		return false, err
	}
	rest := strings.TrimPrefix(dueKey, wakeDue)
	parts := strings.SplitN(rest, "/", 3) // time, flow, escaped key
	if len(parts) != 3 {
		return false, nil // a malformed entry: dropped
	}
	w, err := getRecord[wake](t.tx, wakePrefix+parts[1]+"/"+parts[2])
	if errors.Is(err, store.ErrKeyNotFound) {
		return false, nil // pruned with its flow
	}
	if err != nil || !w.FiredAt.IsZero() {
		return false, err
	}
	w.FiredAt = t.now
	if err := t.put(wakeKey(w.FlowID, w.Key), w); err != nil {
		return false, err
	}
	f, err := loadFlow(t.tx, w.FlowID)
	if errors.Is(err, sdk.ErrNotFound) {
		return false, nil
	}
	if err != nil || f.Status.Terminal() {
		return false, err
	}
	data, err := json.Marshal(sdk.Woken{Key: w.Key, At: w.At})
	if err != nil {
		return false, err
	}
	if err := t.appendEvent(f, sdk.EventFlowWoken, "", data); err != nil {
		return false, err
	}
	return true, t.recordData(f.ID, HistoryEntry{Kind: HistoryTimerFired, Summary: fmt.Sprintf("wake %q fired", w.Key)},
		map[string]any{"key": w.Key, "at": w.At})
}

// pruneWakes deletes the wakes of flow flowID and the queue entries of
// those still pending.
func (t *txn) pruneWakes(flowID string) error {
	var pending []string
	var decodeErr error
	err := t.tx.Scan(wakePrefix+flowID+"/", store.ScanOptions{}, func(it store.Item) bool {
		w := new(wake)
		if decodeErr = json.Unmarshal(it.Value, w); decodeErr != nil {
			return false
		}
		if w.FiredAt.IsZero() {
			pending = append(pending, wakeDueKey(w))
		}
		return true
	})
	if err != nil {
		return err
	}
	if decodeErr != nil {
		return fmt.Errorf("a wake of flow %s is damaged: %w", flowID, decodeErr)
	}
	for _, k := range pending {
		if err := t.del(k); err != nil {
			return err
		}
	}
	return t.deletePrefix(wakePrefix + flowID + "/")
}
