package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Overlay is a Store whose writes never reach the store beneath it: Update
// keeps its changes in memory, later Views see them over the base, and
// Close drops them. It is how a read-only command shows what a writer
// would record (the runner's reconcile, say) without recording it. Seal
// ends the writing: Update then fails with ErrReadOnly, so whatever runs
// next cannot mistake the overlay for the store. Make one with NewOverlay;
// the zero value is not usable. It is safe for concurrent use; an Update
// excludes every other call while it runs.
type Overlay struct {
	base Store

	mu     sync.RWMutex
	items  map[string]*Item // a nil Item is a key deleted in the overlay
	sealed bool
}

var _ Store = (*Overlay)(nil)

// NewOverlay returns an Overlay over base, typically a ReadOnly store.
// Close closes base too. A nil base is an empty store.
func NewOverlay(base Store) *Overlay {
	return &Overlay{base: base, items: map[string]*Item{}}
}

// Seal makes every later Update fail with ErrReadOnly. What was written
// before stays visible. It is idempotent.
func (o *Overlay) Seal() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sealed = true
}

// View implements Store: fn reads the overlay's changes over a read
// transaction of the base.
func (o *Overlay) View(ctx context.Context, fn func(ReadTx) error) error {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.viewBase(ctx, func(base ReadTx) error {
		return fn(overlayTx{base: base, items: o.items})
	})
}

// Update implements Store: fn's writes are kept in memory when it returns
// nil and dropped when it fails. After Seal it returns ErrReadOnly and
// runs nothing.
func (o *Overlay) Update(ctx context.Context, fn func(Tx) error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sealed {
		return fmt.Errorf("%w: this view of the store shows what a writer would record and cannot be changed", ErrReadOnly)
	}
	pending := map[string]*Item{}
	if err := o.viewBase(ctx, func(base ReadTx) error {
		return fn(overlayTx{base: base, items: o.items, pending: pending})
	}); err != nil {
		return err
	}
	maps.Copy(o.items, pending)
	return nil
}

// Close drops the overlay's changes and closes the base.
func (o *Overlay) Close() error {
	if o.base == nil {
		return nil
	}
	return o.base.Close()
}

// viewBase runs fn in a read transaction of the base, bounded by ctx.
func (o *Overlay) viewBase(ctx context.Context, fn func(ReadTx) error) error {
	if o.base == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(emptyTx{})
	}
	return o.base.View(ctx, fn)
}

// emptyTx reads a store with no keys.
type emptyTx struct{}

func (emptyTx) Get(key string) (Item, error) {
	if key == "" {
		return Item{}, ErrEmptyKey
	}
	return Item{}, ErrKeyNotFound
}

func (emptyTx) Scan(string, ScanOptions, func(Item) bool) error { return nil }

// overlayTx reads pending (this Update's writes), then items (earlier
// Updates'), then the base. pending is nil in a View.
type overlayTx struct {
	base    ReadTx
	items   map[string]*Item
	pending map[string]*Item
}

// lookup returns the overlay's item for key (nil if the overlay deleted
// it), and whether the overlay has the key at all.
func (t overlayTx) lookup(key string) (*Item, bool) {
	if it, ok := t.pending[key]; ok {
		return it, true
	}
	it, ok := t.items[key]
	return it, ok
}

// Get implements ReadTx.
func (t overlayTx) Get(key string) (Item, error) {
	if key == "" {
		return Item{}, ErrEmptyKey
	}
	it, ok := t.lookup(key)
	switch {
	case !ok:
		return t.base.Get(key)
	case it == nil:
		return Item{}, ErrKeyNotFound
	}
	return copyItem(it), nil
}

// Put implements Tx.
func (t overlayTx) Put(key string, value []byte) (int64, error) {
	if t.pending == nil {
		return 0, ErrReadOnly
	}
	if len(value) > MaxValueSize {
		return 0, fmt.Errorf("%w: key %q, %d bytes", ErrValueTooLarge, key, len(value))
	}
	cur, err := t.revision(key)
	if err != nil {
		return 0, err
	}
	t.pending[key] = &Item{Key: key, Value: bytes.Clone(value), Revision: cur + 1}
	return cur + 1, nil
}

// RevisionReader is a ReadTx that can say a key's revision for a Put
// apart from a read of the caller's (etcd's reader checks a Put's
// revision differently from what the caller's function read). A Buffer
// over one numbers its Puts with Revision.
type RevisionReader interface {
	// Revision returns key's revision, 0 when it does not exist.
	Revision(key string) (int64, error)
}

// revision returns key's current revision as this transaction sees it, 0
// when it does not exist.
func (t overlayTx) revision(key string) (int64, error) {
	if key == "" {
		return 0, ErrEmptyKey
	}
	if it, ok := t.lookup(key); ok {
		if it == nil {
			return 0, nil
		}
		return it.Revision, nil
	}
	if r, ok := t.base.(RevisionReader); ok {
		return r.Revision(key)
	}
	switch cur, err := t.base.Get(key); {
	case err == nil:
		return cur.Revision, nil
	case errors.Is(err, ErrKeyNotFound):
		return 0, nil
	default:
		return 0, err
	}
}

// Delete implements Tx.
func (t overlayTx) Delete(key string) error {
	if t.pending == nil {
		return ErrReadOnly
	}
	if key == "" {
		return ErrEmptyKey
	}
	t.pending[key] = nil
	return nil
}

// Scan implements ReadTx: it walks the base and the overlay's keys
// together, in the scan's order, the overlay's item replacing the base's.
func (t overlayTx) Scan(prefix string, opts ScanOptions, fn func(Item) bool) error {
	if opts.Limit < 0 {
		return errors.New("store: ScanOptions.Limit must not be negative")
	}
	keys := t.overlaid(prefix, opts)
	before := func(a, b string) bool { return a != b && (a < b) != opts.Reverse }
	n, stopped := 0, false
	// emit passes one item to fn, and reports whether the scan goes on.
	emit := func(it Item) bool {
		if !fn(it) {
			return false
		}
		n++
		return opts.Limit == 0 || n < opts.Limit
	}
	// flush emits the overlay's keys that come before key in the scan
	// (all of them when key is empty), and reports whether the scan goes on.
	flush := func(key string) bool {
		for len(keys) > 0 && (key == "" || before(keys[0], key)) {
			it, _ := t.lookup(keys[0])
			keys = keys[1:]
			if it != nil && !emit(copyItem(it)) {
				return false
			}
		}
		return true
	}
	err := t.base.Scan(prefix, ScanOptions{After: opts.After, Reverse: opts.Reverse}, func(b Item) bool {
		if !flush(b.Key) {
			stopped = true
			return false
		}
		if it, ok := t.lookup(b.Key); ok {
			if len(keys) > 0 && keys[0] == b.Key {
				keys = keys[1:]
			}
			if it == nil {
				return true
			}
			b = copyItem(it)
		}
		if !emit(b) {
			stopped = true
			return false
		}
		return true
	})
	if err != nil || stopped {
		return err
	}
	flush("")
	return nil
}

// overlaid returns the overlay's keys under prefix that a scan with opts
// visits, in its order.
func (t overlayTx) overlaid(prefix string, opts ScanOptions) []string {
	var keys []string
	for _, m := range []map[string]*Item{t.items, t.pending} {
		for k := range m {
			if !strings.HasPrefix(k, prefix) || (opts.After != "" && (k <= opts.After) != opts.Reverse) || k == opts.After {
				continue
			}
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if opts.Reverse {
		slices.Reverse(keys)
	}
	return keys
}

// copyItem returns a copy of it whose Value the caller may keep.
func copyItem(it *Item) Item {
	c := *it
	c.Value = bytes.Clone(it.Value)
	return c
}
