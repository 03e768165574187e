package gcfloor

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"

	"github.com/flowgate/flowgate/host/polltest"
)

func TestPercentLetsASmallHeapGrowToTheFloorAndLeavesALargeOneAlone(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},               // nothing measured yet: Go's default
		{1 * mib, 6300},        // 1 MiB live may grow to 64
		{8 * mib, 700},         // 8 MiB live may grow to 64
		{16 * mib, 300},        // 16 MiB live may grow to 64
		{32 * mib, 100},        // half the floor: the default doubles it to 64
		{500 * mib, 100},       // far above the floor: the default
		{1024, maxPercent},     // a tiny heap: bounded
		{64*mib/101 + 1, 9999}, // just above the bound
	} {
		if got := percentFor(64*mib, c.live); got != c.want {
			t.Errorf("percentFor(64 MiB, %d) = %d, want %d", c.live, got, c.want)
		}
	}
}

func TestATunerSetsGOGCAfterEveryCollectionFromTheLiveHeap(t *testing.T) {
	const floor = 64 << 20
	var live atomic.Uint64
	live.Store(1 << 20)
	var last atomic.Int64
	tu := start(floor, func(string) string { return "" }, live.Load, func(p int) int {
		last.Store(int64(p))
		return 100
	})
	if tu == nil {
		t.Fatal("start left the collector alone with neither GOGC nor GOMEMLIMIT set")
	}
	if got := last.Load(); got != 6300 {
		t.Fatalf("at its start, with 1 MiB live, the tuner set GOGC %d, want 6300", got)
	}
	// The tuner sets GOGC only when it changes, so a live heap that
	// grows shows that it still runs after collections.
	live.Store(48 << 20)
	polltest.Until(t, "the tuner to set GOGC 100 for 48 MiB live after a collection", func() bool {
		runtime.GC()
		return last.Load() == 100
	})
	live.Store(4 << 20)
	polltest.Until(t, "the tuner to set GOGC 1500 for 4 MiB live after a later collection", func() bool {
		runtime.GC()
		return last.Load() == 1500
	})
}

func TestASetGOGCOrGOMEMLIMITLeavesTheCollectorAlone(t *testing.T) {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		env := func(k string) string {
			if k == name {
				return "200"
			}
			return ""
		}
		called := false
		if tu := start(Floor, env, liveHeap, func(int) int { called = true; return 100 }); tu != nil || called {
			t.Errorf("with %s set, start tuned the collector", name)
		}
	}
}

func TestKeepRaisesThisProcessGOGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	Keep(Floor)
	gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	polltest.Until(t, "GOGC to rise above 100 over this test's small heap", func() bool {
		runtime.GC()
		metrics.Read(gogc)
		return gogc[0].Value.Uint64() > 100
	})
}
