package flows

import (
	"slices"
	"strconv"
)

// Object is a JSON object that keeps its keys in JavaScript's order, so
// that what a pipeline prints, and what dedupe compares, is what Lobster
// prints and compares: keys that are array indexes ("0", "42") first, in
// ascending numeric order, then every other key in the order it was
// first set. A Go map has no order, so values decoded by DecodeJSON and
// objects the stages build are *Object, never map[string]any.
//
// The zero value is an empty object ready to use. An Object is not safe
// for concurrent writes; stages copy one before changing it.
type Object struct {
	keys []string
	vals []any
	// index finds a key's position once the object has more keys than a
	// scan is cheap for; nil until then.
	index map[string]int
	// nIndex is how many leading keys are array indexes.
	nIndex int
}

// indexFrom is the key count from which Object keeps an index.
const indexFrom = 12

// NewObject returns an empty object with room for n keys.
func NewObject(n int) *Object {
	return &Object{keys: make([]string, 0, n), vals: make([]any, 0, n)}
}

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// Keys returns the keys in order. The slice is the object's own: do not
// change it.
func (o *Object) Keys() []string { return o.keys }

// Get returns the value of key k; ok is false when o has no such key.
func (o *Object) Get(k string) (v any, ok bool) {
	if i := o.find(k); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// Set sets key k to v. A key o has keeps its place; a new one goes where
// JavaScript puts it (see Object).
func (o *Object) Set(k string, v any) {
	if i := o.find(k); i >= 0 {
		o.vals[i] = v
		return
	}
	n, isIndex := arrayIndex(k)
	if !isIndex || o.nIndex == len(o.keys) && (o.nIndex == 0 || o.lastIndex() < n) {
		o.keys, o.vals = append(o.keys, k), append(o.vals, v)
		if isIndex {
			o.nIndex++
		}
		o.noteKey(k, len(o.keys)-1)
		return
	}
	pos := 0
	for pos < o.nIndex {
		if m, _ := arrayIndex(o.keys[pos]); m > n {
			break
		}
		pos++
	}
	o.keys = slices.Insert(o.keys, pos, k)
	o.vals = slices.Insert(o.vals, pos, v)
	o.nIndex++
	o.index = nil
	o.noteKey("", -1)
}

// Clone returns a shallow copy of o: the values are shared.
func (o *Object) Clone() *Object {
	c := &Object{keys: append([]string(nil), o.keys...), vals: append([]any(nil), o.vals...), nIndex: o.nIndex}
	c.noteKey("", -1)
	return c
}

// find is the position of key k, or -1.
func (o *Object) find(k string) int {
	if o.index != nil {
		if i, ok := o.index[k]; ok {
			return i
		}
		return -1
	}
	for i, key := range o.keys {
		if key == k {
			return i
		}
	}
	return -1
}

// noteKey keeps the index up to date after key k was put at position i;
// with i < 0 it rebuilds the index from scratch, if o is large enough to
// keep one.
func (o *Object) noteKey(k string, i int) {
	switch {
	case len(o.keys) < indexFrom:
		return
	case o.index == nil || i < 0:
		o.index = make(map[string]int, len(o.keys))
		for j, key := range o.keys {
			o.index[key] = j
		}
	default:
		o.index[k] = i
	}
}

// lastIndex is the numeric value of the last array-index key.
func (o *Object) lastIndex() uint64 {
	n, _ := arrayIndex(o.keys[o.nIndex-1])
	return n
}

// arrayIndex reports whether k is an ECMAScript array index (the
// canonical decimal form of an integer below 2³²−1) and its value; such
// keys are ordered numerically ahead of the others.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || k[0] < '0' || k[0] > '9' || len(k) > 1 && k[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// fields is o's members as a map, for a caller that only reads them by
// key (a run's args); the members' own values keep their order.
func (o *Object) fields() map[string]any {
	m := make(map[string]any, len(o.keys))
	for i, k := range o.keys {
		m[k] = o.vals[i]
	}
	return m
}

// MarshalJSON writes o with its keys in order, as JSON.stringify does.
func (o *Object) MarshalJSON() ([]byte, error) {
	return appendJSON(nil, o, "", ""), nil
}
