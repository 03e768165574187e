package engine

import (
	"bytes"
	"reflect"
	"sync"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// decoded remembers the last decoding of the task and flow records read
// most recently, so that a record read again unchanged is copied rather
// than decoded again. A task's record is read five or six times between
// its creation and its end (the dispatch that picks it, its start, the
// supervision that follows it, its settling, its end), in only three
// versions; decoding task and flow records was 12% of the gateway's CPU
// samples in BenchmarkDispatch's profile (docs/performance.md).
//
// An entry is the record's exact bytes and what decoding and validating
// them gave, which is a function of those bytes and the key alone: a
// read whose bytes differ from the entry's, by so much as one, decodes
// them. So the memo needs no invalidation: a write, another gateway's
// write through etcd, or a record of another store (several engines
// share it in one process) can only make it miss. What it holds is
// never handed out: each hit gets a deep copy (cloneRecord), which the
// caller may change as it changes a record it decoded.
//
// A listing reads through it without filling it (scanRecord). The
// listings of a flow's tasks keep their own, larger memo (taskMemo),
// whose readers never change what they get, so that a shallow copy
// serves them. The raw bytes are copied although store.Item.Value is
// the caller's own: a caller may change it, and a memo whose bytes no
// longer match its value would hand out the wrong record.
var decoded = decodeMemo{entries: map[string]decodedEntry{}}

const (
	// decodedEntries bounds the memo: the records of the tasks running
	// at once and of those about to, several times over. At 1,024 a
	// gateway that had reattached 1,000 tasks kept 10 MB more resident.
	decodedEntries = 256
	// decodedMaxRecord leaves a large record (a task with a big result,
	// a flow with a big state) to be decoded each time: copying it saves
	// less, and holding it costs more.
	decodedMaxRecord = 8 << 10
)

type decodeMemo struct {
	mu      sync.Mutex
	entries map[string]decodedEntry // by record key
}

type decodedEntry struct {
	raw []byte
	val any // *stored.Task or *sdk.Flow, never changed once stored
}

// memoized reports whether records of T are memoized.
func memoized[T any]() bool {
	switch any((*T)(nil)).(type) {
	case *stored.Task, *sdk.Flow:
		return true
	}
	return false
}

// memoGet returns a copy of what key's record decoded to when its bytes were
// raw in m, or nil when m does not hold that.
func memoGet[T any](m *decodeMemo, key string, raw []byte) *T {
	m.mu.Lock()
	e, ok := m.entries[key]
	m.mu.Unlock()
	if !ok || !bytes.Equal(e.raw, raw) {
		return nil
	}
	v, ok := e.val.(*T)
	if !ok {
		return nil
	}
	return cloneRecord(v)
}

// put remembers that key's record, with bytes raw, decoded to v; v must
// not be changed afterwards.
func (m *decodeMemo) put(key string, raw []byte, v any) {
	if len(raw) > decodedMaxRecord {
		return
	}
	e := decodedEntry{raw: bytes.Clone(raw), val: v}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[key]; !ok && len(m.entries) >= decodedEntries {
		for k := range m.entries { // any one: map order is unspecified
			delete(m.entries, k)
			break
		}
	}
	m.entries[key] = e
}

// cloneRecord returns a deep copy of v: every pointer, slice, map and
// interface in it is copied, so that changing the copy cannot change v.
// Strings are shared (they cannot change), and so are a struct's
// unexported fields, which JSON never sets (time.Time's location).
func cloneRecord[T any](v *T) *T {
	c := new(T)
	dst, src := reflect.ValueOf(c).Elem(), reflect.ValueOf(v).Elem()
	if cp := copierFor(src.Type()); cp != nil {
		cp(dst, src)
	} else {
		dst.Set(src)
	}
	return c
}

// A copier sets dst, a settable zero value of src's type, to a deep copy
// of src. copierFor returns nil for a type whose values hold no memory a
// copy would share: assigning one copies it.
type copier func(dst, src reflect.Value)

var copiers sync.Map // reflect.Type -> copier (nil: assign)

func copierFor(t reflect.Type) copier {
	if c, ok := copiers.Load(t); ok {
		return c.(copier)
	}
	return buildCopier(t, map[reflect.Type]*copier{})
}

// buildCopier makes t's copier; building holds those of the types being
// built further up, so that a type that contains itself calls its own.
func buildCopier(t reflect.Type, building map[reflect.Type]*copier) copier {
	if c, ok := copiers.Load(t); ok {
		return c.(copier)
	}
	if c, ok := building[t]; ok {
		return func(dst, src reflect.Value) { (*c)(dst, src) }
	}
	self := new(copier)
	building[t] = self
	defer delete(building, t)
	var c copier
	switch t.Kind() {
	case reflect.Pointer:
		elem := buildCopier(t.Elem(), building)
		c = func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			p := reflect.New(t.Elem())
			if elem != nil {
				elem(p.Elem(), src.Elem())
			} else {
				p.Elem().Set(src.Elem())
			}
			dst.Set(p)
		}
	case reflect.Struct:
		type field struct {
			i    int
			copy copier
		}
		var fields []field
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				if fc := buildCopier(f.Type, building); fc != nil {
					fields = append(fields, field{i, fc})
				}
			}
		}
		if len(fields) > 0 {
			c = func(dst, src reflect.Value) {
				dst.Set(src)
				for _, f := range fields {
					d := dst.Field(f.i)
					d.SetZero()
					f.copy(d, src.Field(f.i))
				}
			}
		}
	case reflect.Slice:
		elem := buildCopier(t.Elem(), building)
		c = func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			s := reflect.MakeSlice(t, src.Len(), src.Len())
			if elem == nil {
				reflect.Copy(s, src)
			} else {
				for i := range src.Len() {
					elem(s.Index(i), src.Index(i))
				}
			}
			dst.Set(s)
		}
	case reflect.Array:
		if elem := buildCopier(t.Elem(), building); elem != nil {
			c = func(dst, src reflect.Value) {
				for i := range src.Len() {
					elem(dst.Index(i), src.Index(i))
				}
			}
		}
	case reflect.Map:
		key, elem := buildCopier(t.Key(), building), buildCopier(t.Elem(), building)
		c = func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			m := reflect.MakeMapWithSize(t, src.Len())
			for it := src.MapRange(); it.Next(); {
				k, v := it.Key(), it.Value()
				if key != nil {
					k = reflect.New(t.Key()).Elem()
					key(k, it.Key())
				}
				if elem != nil {
					v = reflect.New(t.Elem()).Elem()
					elem(v, it.Value())
				}
				m.SetMapIndex(k, v)
			}
			dst.Set(m)
		}
	case reflect.Interface:
		c = func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			e := reflect.New(src.Elem().Type()).Elem()
			if ec := copierFor(src.Elem().Type()); ec != nil {
				ec(e, src.Elem())
			} else {
				e.Set(src.Elem())
			}
			dst.Set(e)
		}
	}
	// chan, func and unsafe pointer are in no record: assigned, shared.
	*self = c
	if c == nil {
		*self = func(dst, src reflect.Value) { dst.Set(src) }
	}
	copiers.Store(t, c)
	return c
}
