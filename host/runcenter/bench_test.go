package runcenter_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/sdk"
)

// benchFlows is how many flows the list benchmark's store holds.
const benchFlows = 10_000

// BenchmarkFlowListFirstResponse measures the flow list's first response
// (GET / over the gateway's real TCP listener, with a bearer token, read
// to the end) against a real store holding 10,000 flows: one where 1 in
// 20 is still active, as in a store that has run a while, and one where
// every flow is active, the most the pressure line has to read (it looks
// at every active flow for a cancel request). The page reads one page of
// PageSize flows through the store's index, never all of them.
// docs/performance.md reports it; the target is under 50 ms.
func BenchmarkFlowListFirstResponse(b *testing.B) {
	for _, tc := range []struct {
		name      string
		activeOne int // one flow in activeOne stays active
	}{{"active=5%", 20}, {"active=100%", 1}} {
		b.Run(tc.name, func(b *testing.B) { benchFlowList(b, tc.activeOne) })
	}
}

func benchFlowList(b *testing.B, activeOne int) {
	s := startSeeded(b, func(eng *engine.Engine) { fill(b, eng, benchFlows, activeOne) },
		runcenter.Token{Name: "bench", Token: "bench-token"})
	get := func() string { return s.get("/", "bench-token") }
	body := get()
	require.Equal(b, runcenter.PageSize, strings.Count(body, `<tr><td><a href="/flows/`), "one page of flows")
	require.Contains(b, body, "10000 total")
	for b.Loop() {
		get()
	}
}

// scaleFlows is how many flows the at-scale list benchmark's store holds.
const scaleFlows = 100_000

// BenchmarkFlowListAt100k measures the flow list's first response as
// BenchmarkFlowListFirstResponse does, over one store of 100,000 flows
// (1 in 20 active; the oldest one's goal is "the needle"): with no
// filter; with a search every flow matches; with a search only the
// oldest flow matches, where the page stops after Config.FlowScan flows
// and offers to search older ones; with a status filter; and with no
// filter after a write (a flow created, untimed, before each page, so
// the pressure line counts every flow again, which a page with no write
// since the last one does not). Its setup takes minutes: run it alone, with TMPDIR on a
// tmpfs. docs/runcenter.md reports it; the target is under 50 ms.
func BenchmarkFlowListAt100k(b *testing.B) {
	s := startSeeded(b, func(eng *engine.Engine) {
		_, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "bench", ControllerID: "ctl", Goal: "the needle"})
		require.NoError(b, err)
		fill(b, eng, scaleFlows-1, 20)
	}, runcenter.Token{Name: "bench", Token: "bench-token"})
	for _, tc := range []struct {
		name, query string
		rows        int
		write       bool
	}{
		{"all", "", runcenter.PageSize, false},
		{"search=many", "?search=BENCHMARK", runcenter.PageSize, false},
		{"search=few", "?search=needle", 0, false},
		{"status=succeeded", "?status=succeeded", runcenter.PageSize, false},
		// Last: the flows it creates leave events that the gateway keeps
		// trying to deliver, writes that would count again for the others.
		{"all,after-a-write", "", runcenter.PageSize, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			sub := *s
			sub.t = b // failures are the sub-benchmark's
			get := func() string { return sub.get("/"+tc.query, "bench-token") }
			body := get()
			require.Equal(b, tc.rows, strings.Count(body, `<tr><td><a href="/flows/`))
			require.Regexp(b, `\b1000\d\d total`, body)
			for b.Loop() {
				if tc.write { // the write is not the page's cost: untimed
					b.StopTimer()
					_, err := s.c.CreateFlow(context.Background(), apitype.CreateFlowInput{OwnerKey: "bench-write", ControllerID: "ctl",
						Goal: "a write between pages", AllowUnknownController: true})
					require.NoError(b, err)
					b.StartTimer()
				}
				get()
			}
		})
	}
}

// fill creates n flows and ends all but one in activeOne, from 32
// writers at once so the store's group commit keeps the set-up short.
// Their controller's events are acknowledged, as a running controller
// would, so that no delivery is left for the gateway to retry.
func fill(tb testing.TB, eng *engine.Engine, n, activeOne int) {
	tb.Helper()
	const writers = 32
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "bench", ControllerID: "ctl", Goal: "flow of the list benchmark"})
				if err == nil && i%activeOne != 0 {
					_, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowSucceeded})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	require.NoError(tb, <-errs)
	for {
		due, err := eng.NextDeliveries(0, nil)
		require.NoError(tb, err)
		if len(due) == 0 {
			return
		}
		for _, d := range due {
			require.NoError(tb, eng.AckEvent(d.Event.FlowID, d.Event.Seq))
		}
	}
}
