// Package gcfloor keeps Go's garbage collector from running while a
// process's heap is small.
//
// With the default GOGC of 100 the collector runs whenever the heap has
// doubled since the last collection. A gateway's live heap is a few
// megabytes, and each task it runs allocates hundreds of kilobytes of
// records, history and JSON, so at hundreds of tasks a second it collects
// dozens of times a second: 13% of the gateway's CPU in `flowgate bench`'s
// dispatch, on two cores shared with the tasks themselves.
//
// Keep raises the collector's target so that the heap may grow to a floor
// before a collection, as a memory-limited runtime's GOMEMLIMIT lets a
// heap grow to its limit, but from below: once the live heap is half the
// floor or more, Go's own pacing (GOGC=100) holds again, so a large
// gateway uses no more memory than it did. After every collection the
// target is set anew from the live heap it measured:
//
//	GOGC = max(100, floor/live×100 − 100)
//
// A GOGC or GOMEMLIMIT set in the environment is the user's choice, and
// Keep then changes nothing.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Floor is the heap a flowgate process may reach before its first
// collections: 64 MiB.
const Floor = 64 << 20

// maxPercent bounds GOGC when the live heap is tiny (a process just
// started), so that one measurement cannot set an absurd target.
const maxPercent = 10_000

var once sync.Once

// Keep starts keeping the heap's floor for this process, once; later
// calls do nothing. It does nothing at all when GOGC or GOMEMLIMIT is set
// in the environment.
func Keep(floor uint64) {
	once.Do(func() { start(floor, os.Getenv, liveHeap, debug.SetGCPercent) })
}

// start tunes GOGC with set for floor, from the live heap live reports,
// now and after every collection from now on, unless getenv shows GOGC
// or GOMEMLIMIT set; it returns the tuner, or nil when it left the
// collector alone.
func start(floor uint64, getenv func(string) string, live func() uint64, set func(int) int) *tuner {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return nil
	}
	t := &tuner{floor: floor, live: live, set: set}
	t.tune()
	t.arm()
	return t
}

// tuner sets GOGC after each collection from the live heap.
type tuner struct {
	floor   uint64
	percent int
	live    func() uint64 // liveHeap, or a test's
	set     func(int) int // debug.SetGCPercent, or a test's
}

// sentinel is an object made only to be collected: its cleanup runs
// after the collection that found it unreachable, tunes and arms the
// next one. It holds a pointer so that it is not a tiny allocation,
// whose cleanup may never run.
type sentinel struct{ _ *int }

func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *tuner) {
		t.tune()
		t.arm()
	}, t)
}

// tune sets GOGC for the live heap, when it changed.
func (t *tuner) tune() {
	if p := percentFor(t.floor, t.live()); p != t.percent {
		t.percent = p
		t.set(p)
	}
}

// percentFor is the GOGC that lets a heap of live bytes grow to floor
// before the next collection, and never less than Go's default.
func percentFor(floor, live uint64) int {
	if live == 0 || live >= floor/2 {
		return 100
	}
	p := floor*100/live - 100
	if p > maxPercent {
		return maxPercent
	}
	return int(p)
}

// liveHeap is the heap the last collection found live, in bytes.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
