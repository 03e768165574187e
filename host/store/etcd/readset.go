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
// it did not exist, the revision at which that was current (the snapshot's,
// or an older one for a key served from the Store's cache), and why it was
// read.
type seenKey struct {
	mod, version, at int64
	kind             readKind
	// assumed says that the key was not read but taken to be absent
	// (reader.AssumeAbsent): no revision vouches for it, only its
	// compare.
	assumed bool
}

// keyRange is [start, end) of etcd keys, as read at revision at.
type keyRange struct {
	start, end string
	at         int64
}

func newReadSet() *readSet {
	return &readSet{keys: map[string]seenKey{}}
}

// saw records that key was read as kv (nil: it did not exist), current at
// revision at, for kind. A key read again keeps what it was first read as:
// when a later read (a scan after a cached Get) found it changed, the
// first read's compare fails the commit, as the function saw both.
func (rs *readSet) saw(key string, kv *mvccpb.KeyValue, at int64, kind readKind) {
	if rs == nil {
		return
	}
	if old, ok := rs.keys[key]; ok {
		old.kind = max(old.kind, kind)
		rs.keys[key] = old
		return
	}
	k := seenKey{at: at, kind: kind}
	if kv != nil {
		k.mod, k.version = kv.ModRevision, kv.Version
	}
	rs.keys[key] = k
}

// assume records that key was taken to be absent without a read: the
// commit compares that it still is, as for a key got and not found.
func (rs *readSet) assume(key string) {
	if _, ok := rs.keys[key]; !ok {
		rs.keys[key] = seenKey{kind: got, assumed: true}
	}
}

// covered records that a scan saw every key in [start, end) at revision
// at.
func (rs *readSet) covered(start, end string, at int64) {
	if rs == nil || start >= end {
		return
	}
	rs.ranges = append(rs.ranges, keyRange{start, end, at})
}

// scannedAt returns the revision of a scan that covered key, if one did.
func (rs *readSet) scannedAt(key string) (int64, bool) {
	if rs == nil {
		return 0, false
	}
	for _, r := range rs.ranges {
		if r.start <= key && key < r.end {
			return r.at, true
		}
	}
	return 0, false
}

// empty reports whether nothing was read.
func (rs *readSet) empty() bool {
	return len(rs.keys) == 0 && len(rs.ranges) == 0
}

// compares returns the conditions under which what was read is still
// current at commit, at most max of them (etcd's limit on one
// transaction), and the keys compared one by one, or false when they
// cannot fit:
//
//   - each key the function got still has the ModRevision it was read at
//     (0: still absent), which also catches a key deleted and re-created;
//   - no key in a scanned range (overlapping ranges merged) changed or
//     appeared after the revision it was scanned at;
//   - each key a Put numbered, one by one when they all fit, else one
//     range per directory unchanged since the oldest of its reads, which
//     catches another writer creating or changing them (not deleting one,
//     which would only make the revision Put returned wrong, for a key
//     the function never read);
//   - each key a scan passed on, as room is left: a change to it is
//     caught by its range, its deletion only by its own compare.
//
// The first three must fit.
func (rs *readSet) compares(max int) (cmps []clientv3.Cmp, compared []string, ok bool) {
	exact := func(k string) clientv3.Cmp {
		compared = append(compared, k)
		return clientv3.Compare(clientv3.ModRevision(k), "=", rs.keys[k].mod)
	}
	unchanged := func(r keyRange) clientv3.Cmp {
		return clientv3.Compare(clientv3.ModRevision(r.start), "<", r.at+1).WithRange(r.end)
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
		for _, r := range rs.directories(numberedKeys) {
			cmps = append(cmps, unchanged(r))
		}
	}
	if len(cmps) > max {
		return nil, nil, false
	}
	for _, k := range byKind[scanned] {
		if len(cmps) == max {
			break
		}
		cmps = append(cmps, exact(k))
	}
	return cmps, compared, true
}

// merge returns ranges sorted, with overlapping and touching ones joined
// (at the older of their revisions).
func merge(ranges []keyRange) []keyRange {
	sorted := slices.SortedFunc(slices.Values(ranges), func(a, b keyRange) int { return strings.Compare(a.start, b.start) })
	var out []keyRange
	for _, r := range sorted {
		if n := len(out); n > 0 && r.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, r.end)
			out[n-1].at = min(out[n-1].at, r.at)
			continue
		}
		out = append(out, r)
	}
	return out
}

// directories returns, for sorted keys of the read set, one range per
// directory (the key up to its last "/") from its first key to just past
// its last, at the oldest revision its keys were read at.
func (rs *readSet) directories(keys []string) []keyRange {
	var out []keyRange
	for _, k := range keys {
		dir := k[:strings.LastIndex(k, "/")+1]
		at := rs.keys[k].at
		if n := len(out); n > 0 && strings.HasPrefix(out[n-1].start, dir) && !strings.Contains(out[n-1].start[len(dir):], "/") {
			out[n-1].end = k + "\x00"
			out[n-1].at = min(out[n-1].at, at)
			continue
		}
		out = append(out, keyRange{k, k + "\x00", at})
	}
	return out
}

// oldest returns the oldest revision anything was read at, 0 when a key
// was assumed absent (no revision vouches for that).
func (rs *readSet) oldest() int64 {
	var at int64
	for _, k := range rs.keys {
		if k.assumed {
			return 0
		}
		if at == 0 || k.at < at {
			at = k.at
		}
	}
	for _, r := range rs.ranges {
		if at == 0 || r.at < at {
			at = r.at
		}
	}
	return at
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
