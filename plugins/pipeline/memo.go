package pipeline

import "sync"

// memoLimit is how many entries a memo holds before it is emptied.
const memoLimit = 64

// memo is a cache the controller keeps between events: what a pass
// worked out from something that does not change under its key (a
// loaded workflow, a flow's state entry's bytes), so that the next pass
// need not work it out again. It holds memoLimit entries and is emptied
// when full: a pass that finds nothing in it works the value out as
// before. Values are shared: do not change one taken from it.
type memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

// get returns the value kept under k.
func (m *memo[K, V]) get(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[k]
	return v, ok
}

// put keeps v under k.
func (m *memo[K, V]) put(k K, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= memoLimit {
		m.m = make(map[K]V, memoLimit)
	}
	m.m[k] = v
}
