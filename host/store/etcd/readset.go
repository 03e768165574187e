package etcd

import (
	"maps"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flowgate/flowgate/host/store"
)

// readSet is what an Update read, by etcd key (the installation prefix
// included): it becomes the compares that make the commit fail when any
// of it changed after the snapshot (optimistic concurrency, as etcd's own
// STM does). A nil readSet (a View) records nothing.
type readSet struct {
	keys map[string]seenKey
	// ranges holds the key ranges scans covered, to catch keys created in
	// them after the snapshot.
	ranges []keyRange
}

// readKind says why a key was read; a key read several ways keeps the
// strongest.
type readKind int

const (
	// numbered: read only to number a Put of the key (store.RevisionReader).
	numbered readKind = iota
	// scanned: passed on by a Scan.
	scanned
	// got: read with Get by the caller's function.
	got
)

// seenKey is a key as read: its etcd ModRevision and Version, both 0 when
// it did not exist, and why it was read.
type seenKey struct {
	mod, version int64
	kind         readKind
}

// keyRange is [start, end) of etcd keys.
type keyRange struct {
	start, end string
}

func newReadSet() *readSet {
	return &readSet{keys: map[string]seenKey{}}
}

// saw records that key was read as kv (nil: it did not exist) for kind.
func (rs *readSet) saw(key string, kv *mvccpb.KeyValue, kind readKind) {
	if rs == nil {
		return
	}
	k := seenKey{kind: kind}
	if kv != nil {
		k.mod, k.version = kv.ModRevision, kv.Version
	}
	if old, ok := rs.keys[key]; ok && old.kind > kind {
		k.kind = old.kind
	}
	rs.keys[key] = k
}

// covered records that a scan saw every key in [start, end).
func (rs *readSet) covered(start, end string) {
	if rs == nil || start >= end {
		return
	}
	rs.ranges = append(rs.ranges, keyRange{start, end})
}

// compares returns the conditions under which what was read is still
// current at commit, at most max of them (etcd's limit on one
// transaction), or false when they cannot fit:
//
//   - each key the function got still has the ModRevision it was read at
//     (0: still absent), which also catches a key deleted and re-created;
//   - no key in a scanned range (overlapping ranges merged) changed or
//     appeared after the snapshot revision rev;
//   - each key a Put numbered, one by one when they all fit, else one
//     range per directory, which catches another writer creating or
//     changing them (not deleting one, which would only make the revision
//     Put returned wrong, for a key the function never read);
//   - each key a scan passed on, as room is left: a change to it is
//     caught by its range, its deletion only by its own compare.
//
// The first three must fit.
func (rs *readSet) compares(rev int64, max int) ([]clientv3.Cmp, bool) {
	var cmps []clientv3.Cmp
	exact := func(k string) clientv3.Cmp {
		return clientv3.Compare(clientv3.ModRevision(k), "=", rs.keys[k].mod)
	}
	unchanged := func(r keyRange) clientv3.Cmp {
		return clientv3.Compare(clientv3.ModRevision(r.start), "<", rev+1).WithRange(r.end)
	}
	byKind := map[readKind][]string{}
	for _, k := range slices.Sorted(maps.Keys(rs.keys)) {
		byKind[rs.keys[k].kind] = append(byKind[rs.keys[k].kind], k)
	}
	for _, k := range byKind[got] {
		cmps = append(cmps, exact(k))
	}
	for _, r := range merge(rs.ranges) {
		cmps = append(cmps, unchanged(r))
	}
	if numberedKeys := byKind[numbered]; len(cmps)+len(numberedKeys) <= max {
		for _, k := range numberedKeys {
			cmps = append(cmps, exact(k))
		}
	} else {
		for _, r := range directories(numberedKeys) {
			cmps = append(cmps, unchanged(r))
		}
	}
	if len(cmps) > max {
		return nil, false
	}
	for _, k := range byKind[scanned] {
		if len(cmps) == max {
			break
		}
		cmps = append(cmps, exact(k))
	}
	return cmps, true
}

// merge returns ranges sorted, with overlapping and touching ones joined.
func merge(ranges []keyRange) []keyRange {
	sorted := slices.SortedFunc(slices.Values(ranges), func(a, b keyRange) int { return strings.Compare(a.start, b.start) })
	var out []keyRange
	for _, r := range sorted {
		if n := len(out); n > 0 && r.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, r.end)
			continue
		}
		out = append(out, r)
	}
	return out
}

// directories returns, for sorted keys, one range per directory (the key
// up to its last "/") from its first key to just past its last.
func directories(keys []string) []keyRange {
	var out []keyRange
	for _, k := range keys {
		dir := k[:strings.LastIndex(k, "/")+1]
		if n := len(out); n > 0 && strings.HasPrefix(out[n-1].start, dir) && !strings.Contains(out[n-1].start[len(dir):], "/") {
			out[n-1].end = k + "\x00"
			continue
		}
		out = append(out, keyRange{k, k + "\x00"})
	}
	return out
}

// emptied finds the scanned ranges the change empties: every key a scan
// saw in the range is deleted and nothing in it is written. It returns
// them, to be deleted with one range operation each (the range's compare
// already guarantees no key appeared in it since the snapshot), and the
// writes left. This is how a change that deletes a whole directory (a
// flow's history when it is pruned) stays within etcd's operations per
// transaction. Keys in writes lack prefix; ranges have it.
func (rs *readSet) emptied(prefix string, writes []store.Write) ([]keyRange, []store.Write) {
	var out []keyRange
	rest := writes
	deletes := map[string]bool{} // the keys writes delete, prefix included
	for _, w := range writes {
		if w.Delete {
			deletes[prefix+w.Key] = true
		}
	}
	for _, rg := range merge(rs.ranges) {
		in := func(k string) bool { return rg.start <= k && k < rg.end }
		deleted, empties := 0, true
		for _, w := range writes {
			if in(prefix + w.Key) {
				deleted++
				empties = empties && w.Delete
			}
		}
		for k, seen := range rs.keys {
			if empties && in(k) && seen.mod > 0 && !deletes[k] {
				empties = false
			}
		}
		if !empties || deleted < 2 {
			continue
		}
		out = append(out, rg)
		rest = slices.DeleteFunc(slices.Clone(rest), func(w store.Write) bool { return in(prefix + w.Key) })
	}
	return out, rest
}
