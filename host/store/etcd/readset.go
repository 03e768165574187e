package etcd

import (
	"maps"
	"slices"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// readSet is what an Update read, by etcd key (the installation prefix
// included): it becomes the compares
// that make the commit fail when any of it changed after the snapshot
// (optimistic concurrency, as etcd's own STM does). A nil readSet (a
// View) records nothing.
type readSet struct {
	// gets holds the keys read with Get (every key a Put wrote is among
	// them: Put reads the key to number its revision).
	gets map[string]seenKey
	// scans holds the keys a Scan passed to its function.
	scans map[string]seenKey
	// ranges holds the key ranges scans covered, to catch keys created in
	// them after the snapshot.
	ranges []keyRange
}

// seenKey is a key as read: its etcd ModRevision and Version, both 0 when
// it did not exist.
type seenKey struct {
	mod, version int64
}

// keyRange is [start, end) of etcd keys.
type keyRange struct {
	start, end string
}

func newReadSet() *readSet {
	return &readSet{gets: map[string]seenKey{}, scans: map[string]seenKey{}}
}

// got records a Get of key, which found kv or, when kv is nil, nothing.
func (rs *readSet) got(key string, kv *mvccpb.KeyValue) {
	if rs == nil {
		return
	}
	var k seenKey
	if kv != nil {
		k = seenKey{mod: kv.ModRevision, version: kv.Version}
	}
	rs.gets[key] = k
}

// scanned records a key a Scan passed on.
func (rs *readSet) scanned(kv *mvccpb.KeyValue) {
	if rs == nil {
		return
	}
	rs.scans[string(kv.Key)] = seenKey{mod: kv.ModRevision, version: kv.Version}
}

// covered records that a scan saw every key in [start, end).
func (rs *readSet) covered(start, end string) {
	if rs == nil || start >= end {
		return
	}
	rs.ranges = append(rs.ranges, keyRange{start, end})
}

// compares returns the conditions under which what was read is still
// current at commit: each key read still has the ModRevision it was read
// at (0: still absent), which also catches a key deleted and re-created,
// and no key in a scanned range changed or appeared after the snapshot
// revision rev. When they number more than max (etcd's limit on one
// transaction), the keys read with Get and the ranges are kept, and the
// keys only scanned are checked as far as room is left: their changes are
// still caught by the range checks, their deletions only by the per-key
// ones (docs/cluster.md). It returns false when even the Gets and ranges
// do not fit.
func (rs *readSet) compares(rev int64, max int) ([]clientv3.Cmp, bool) {
	cmps := make([]clientv3.Cmp, 0, len(rs.gets)+len(rs.ranges)+len(rs.scans))
	for k, seen := range rs.gets {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", seen.mod))
	}
	for _, r := range rs.ranges {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(r.start), "<", rev+1).WithRange(r.end))
	}
	if len(cmps) > max {
		return nil, false
	}
	for _, k := range slices.Sorted(maps.Keys(rs.scans)) {
		if len(cmps) == max {
			break
		}
		if _, ok := rs.gets[k]; !ok {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", rs.scans[k].mod))
		}
	}
	return cmps, true
}
