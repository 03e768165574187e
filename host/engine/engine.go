package engine

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Config tunes an Engine. The zero value is ready to use.
type Config struct {
	// Now returns the current time. If nil, time.Now is used. Tests inject a
	// fixed or stepping clock.
	Now func() time.Time
	// Rand is the entropy for new ids. If nil, crypto/rand is used.
	Rand io.Reader
	// TaskRetention is how long a terminal task is kept before maintenance
	// may prune it (its cleanup_after). If zero, 7 days.
	TaskRetention time.Duration
	// Logger hears of listeners that panic or are slow (see Listen); if
	// nil, nothing is logged.
	Logger hclog.Logger
	// Observer, if set, counts the listeners that panic.
	Observer ListenerObserver
	// SlowListener is how long a listener may take over one change
	// before it is logged as slow. If zero, DefaultSlowListener.
	SlowListener time.Duration
	// HistoryLimit bounds each flow's history (see History). If zero,
	// DefaultHistoryLimit.
	HistoryLimit int
	// MaxActiveFlows caps the active flows one controller created
	// itself, when it creates another (CreateControllerFlow). If zero,
	// DefaultMaxActiveFlows.
	MaxActiveFlows int
}

// ChangeKind names a change the listeners are told of (Listen).
type ChangeKind int

const (
	// TaskQueued: a task with a command became queued (new or retried).
	TaskQueued ChangeKind = iota + 1
	// TaskCancelRequested: a running task was asked to stop.
	TaskCancelRequested
	// EventQueued: an event was added to a managed flow's outbox.
	EventQueued
	// NoticeQueued: a task's or a flow's finish notice was queued (see
	// Notice); TaskID is empty for a flow's.
	NoticeQueued
	// EventAcked: event Seq of flow FlowID was acknowledged in the
	// transaction of what its controller did for it (Advance's ack), so
	// its delivery has no acknowledgement left to write.
	EventAcked
)

// String is the kind's name in logs and metrics: "task_queued", ….
func (k ChangeKind) String() string {
	switch k {
	case TaskQueued:
		return "task_queued"
	case TaskCancelRequested:
		return "task_cancel_requested"
	case EventQueued:
		return "event_queued"
	case NoticeQueued:
		return "notice_queued"
	case EventAcked:
		return "event_acked"
	}
	return fmt.Sprintf("change_kind_%d", int(k))
}

// Change is one committed change a part must act on (Listener).
type Change struct {
	Kind   ChangeKind
	TaskID string
	FlowID string
	// Seq is the event's sequence number of an EventAcked change; 0 for
	// the others.
	Seq int64
}

// WithDefaults returns a copy of c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	if c.TaskRetention == 0 {
		c.TaskRetention = 7 * 24 * time.Hour
	}
	if c.MaxActiveFlows == 0 {
		c.MaxActiveFlows = DefaultMaxActiveFlows
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.SlowListener == 0 {
		c.SlowListener = DefaultSlowListener
	}
	return c
}

// Validate reports a field that holds an impossible value.
func (c Config) Validate() error {
	if c.TaskRetention < 0 {
		return fmt.Errorf("engine config: TaskRetention must not be negative (got %s)", c.TaskRetention)
	}
	if c.MaxActiveFlows < 0 {
		return fmt.Errorf("engine config: MaxActiveFlows must not be negative (got %d)", c.MaxActiveFlows)
	}
	return nil
}

// Engine is the only writer of flow, task and event records. It is safe for
// concurrent use; every method is one store transaction, bounded by the
// context the engine is bound to (see WithContext).
type Engine struct {
	st  store.Store
	cfg Config
	ids *idSource
	log hclog.Logger
	// listeners is shared by the engine and every copy WithContext makes,
	// so a listener added to one hears the writes of all.
	listeners *listeners
	// starter takes tasks at their creation (StartAtCreation), shared
	// with the engine's copies as listeners are.
	starter *starterSlot
	// tasks keeps the task records read-only listings decoded, shared
	// by every copy WithContext makes.
	tasks *taskMemo
	// ctx bounds every store call the engine makes: on etcd, a call whose
	// ctx ended stops and fails with ctx's error.
	ctx context.Context
}

// New returns an engine over st. It fails only on an invalid config. Its
// store calls are bounded by no context until WithContext binds one:
// New is where the gateway's and the commands' engines begin, and each
// caller that has a context of its own binds it.
func New(st store.Store, cfg Config) (*Engine, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Engine{st: st, cfg: cfg, ids: newIDSource(cfg.Rand), log: cfg.Logger,
		listeners: &listeners{}, starter: &starterSlot{}, tasks: &taskMemo{}, ctx: context.Background()}, nil
}

// WithContext returns the engine bound to ctx: the same store, config and
// id source, with every store call of its methods bounded by ctx, so that
// a request or a loop that stops stops its store calls too (on etcd, at
// once, with ctx's error). It is cheap: bind per request.
func (e *Engine) WithContext(ctx context.Context) *Engine {
	c := *e
	c.ctx = ctx
	return &c
}

// now is the engine's clock, truncated to microseconds so that records
// compare equal after a JSON round trip.
func (e *Engine) now() time.Time { return e.cfg.Now().UTC().Truncate(time.Microsecond) }

// txn is one engine write transaction: the store transaction plus the time
// it runs at, and whether it has written anything yet.
type txn struct {
	tx        store.Tx
	now       time.Time
	retention time.Duration
	wrote     bool
	changes   []Change
	// flows holds the ids of the flows written so far: each flow is
	// written at most once per transaction (see putFlow).
	flows map[string]bool
	// historyLimit and notes serve the flow histories (history.go).
	historyLimit int
	notes        map[string]historyNote
	// stampAt, when set, is the updated_at a flow write stamps instead of
	// now, and repairNote the bookkeeping entry of a task write: a
	// timestamp repair's (timestamps.go).
	stampAt    time.Time
	repairNote string
	// starts is what the write started at creation (startnow.go);
	// queuedNew says that it created a task queued, which the tasks it
	// creates after wait behind; createdQueued holds each task it started
	// at creation as it would have waited, by id.
	starts        *creationStarts
	queuedNew     bool
	createdQueued map[string]*stored.Task
	// histMetas holds the history metas this transaction changed, by
	// flow id, to be written once at its end (history.go).
	histMetas map[string]*historyMeta
}

// notify records a change to report once the transaction commits.
func (t *txn) notify(kind ChangeKind, taskID string) {
	t.changes = append(t.changes, Change{Kind: kind, TaskID: taskID})
}

// write runs fn in one store Update. An error returned before fn wrote
// anything (a refusal: not found, revision conflict, illegal move) is
// reported through a captured value and the empty transaction commits, so a
// refusal never rolls back the other writers of a group commit. An error
// after a write rolls the transaction back.
func (e *Engine) write(fn func(t *txn) error) error {
	return e.writeWith(func(fn func(store.Tx) error) error { return e.st.Update(e.ctx, fn) }, fn)
}

// writeWith is write through update, a store's Update or a fenced one.
func (e *Engine) writeWith(update func(func(store.Tx) error) error, fn func(t *txn) error) error {
	var (
		refused error
		changes []Change
	)
	starts := &creationStarts{starter: e.starter.get()}
	err := update(func(tx store.Tx) error {
		refused, changes = nil, nil
		starts.undo() // a batch run again starts over
		t := &txn{tx: tx, now: e.now(), retention: e.cfg.TaskRetention, historyLimit: e.cfg.HistoryLimit, starts: starts}
		if err := fn(t); err != nil {
			if t.wrote {
				return err
			}
			refused = err
			return nil
		}
		if err := t.putHistoryMetas(); err != nil {
			return err
		}
		changes = t.changes
		return nil
	})
	if err != nil || refused != nil {
		starts.undo()
	} else {
		starts.hand()
	}
	if err != nil {
		return err
	}
	e.tell(changes)
	return refused
}

// view runs fn in one read transaction.
func (e *Engine) view(fn func(tx store.ReadTx) error) error { return e.st.View(e.ctx, fn) }

func (t *txn) put(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	t.wrote = true
	_, err = t.tx.Put(key, b)
	return err
}

func (t *txn) putRaw(key string, b []byte) error {
	t.wrote = true
	_, err := t.tx.Put(key, b)
	return err
}

func (t *txn) del(key string) error {
	t.wrote = true
	return t.tx.Delete(key)
}

// getRecord reads and decodes the record of type T at key (see
// decodeRecord); it returns store.ErrKeyNotFound for a missing key.
func getRecord[T any](tx store.ReadTx, key string) (*T, error) {
	it, err := tx.Get(key)
	if err != nil {
		return nil, err
	}
	return decodeRecord[T](it)
}

// invalid returns an ErrInvalid error with a message.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", sdk.ErrInvalid, fmt.Sprintf(format, args...))
}
