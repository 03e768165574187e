package main_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
)

// TestSubmitThroughRestarts submits 100 tasks with tasks run --detach,
// two at a time, while the real gateway is stopped (SIGTERM, as systemd
// does) and started again every ten answers. A submission that meets the
// gateway going away, or the next one holding the store before it serves
// its socket, must wait for it (or host a gateway once the store is
// free): every one exits 0, and every task it created exists exactly
// once.
func TestSubmitThroughRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary restarted under load")
	}
	const submissions, every = 100, 10
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	cl := &crashLoop{t: t, bin: bin, home: home, work: work, logf: logf}
	cl.startGateway()

	var (
		next, answered atomic.Int32
		mu             sync.Mutex
		failures       []string
		wg             sync.WaitGroup
	)
	for range 2 {
		wg.Go(func() {
			for n := next.Add(1); n <= submissions; n = next.Add(1) {
				label := fmt.Sprintf("s%03d", n)
				code, _, stderr := cl.cli("tasks", "run", "--detach", "--owner", crashOwner, "--label", label, "--", "true")
				if code != 0 {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s exited %d: %s", label, code, stderr))
					mu.Unlock()
				}
				answered.Add(1)
			}
		})
	}
	restarts := 0
	for mark := int32(every); mark < submissions; mark += every {
		polltest.Until(t, fmt.Sprintf("%d submissions to answer", mark), func() bool { return answered.Load() >= mark }, polltest.Within(2*time.Minute), polltest.Every(50*time.Millisecond))
		require.NoError(t, cl.gw.Process.Signal(syscall.SIGTERM))
		<-cl.gwDone
		cl.startGateway()
		restarts++
	}
	wg.Wait()
	require.Empty(t, failures, "%d of %d submissions failed across %d restarts", len(failures), submissions, restarts)

	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	seen := map[string]int{}
	for _, task := range cl.tasks(c) {
		seen[task.Label]++
	}
	for n := 1; n <= submissions; n++ {
		label := fmt.Sprintf("s%03d", n)
		require.Equal(t, 1, seen[label], "task %s exists once", label)
	}
	require.Len(t, seen, submissions)
	cl.kill()
}
