package etcd

import (
	"container/list"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// cache holds what a Store last knew of keys its Updates read or wrote, so
// that an Update's point reads cost no round trip. An entry may be stale
// (another process wrote the key since): the commit's compares on each
// key's ModRevision (or its absence) catch that, and the failed Txn brings
// the keys it compared up to date (see Store.commit). It holds at most max
// keys and forgets the least recently used first. Scans are never served
// from it. It is safe for concurrent use.
type cache struct {
	mu      sync.Mutex
	max     int
	entries map[string]*list.Element // of *cached, by etcd key
	order   list.List                // front: the most recently used
}

// cached is a key as known at an etcd revision: kv (nil when the key did
// not exist) was current at revision at.
type cached struct {
	key string
	kv  *mvccpb.KeyValue
	at  int64
}

func newCache(max int) *cache {
	return &cache{max: max, entries: map[string]*list.Element{}}
}

// get returns what the cache knows of key.
func (c *cache) get(key string) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return cached{}, false
	}
	c.order.MoveToFront(e)
	return *e.Value.(*cached), true
}

// put records that kv (nil: no such key) was current at revision at,
// unless the cache already knows key at a later revision. kv must not be
// changed afterwards: readers share it.
func (c *cache) put(key string, kv *mvccpb.KeyValue, at int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.set(key, kv, at); ok {
		c.order.MoveToFront(e)
		return
	}
	c.entries[key] = c.order.PushFront(&cached{key: key, kv: kv, at: at})
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*cached).key)
	}
}

// update is put for a key the cache holds already, and nothing for
// another: a Scan keeps the cache's keys current without filling it.
func (c *cache) update(key string, kv *mvccpb.KeyValue, at int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(key, kv, at)
}

// set is put for a key the cache holds; it reports false for another.
// The caller holds c.mu.
func (c *cache) set(key string, kv *mvccpb.KeyValue, at int64) (*list.Element, bool) {
	e, ok := c.entries[key]
	if ok {
		if old := e.Value.(*cached); old.at <= at {
			old.kv, old.at = kv, at
		}
	}
	return e, ok
}

// drop forgets key.
func (c *cache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.order.Remove(e)
		delete(c.entries, key)
	}
}

// emptied records that no key in [start, end) exists at revision at.
func (c *cache) emptied(start, end string, at int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, e := range c.entries {
		if old := e.Value.(*cached); start <= key && key < end && old.at <= at {
			old.kv, old.at = nil, at
		}
	}
}
