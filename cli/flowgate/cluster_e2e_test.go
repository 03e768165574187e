package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/cli"
	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The sizes and times of the end-to-end run of issue 20's acceptance.
const (
	fleetTasks = 300
	fleetFlows = 50
	// fleetTTL is every gateway's session lease (cluster.lease_ttl).
	fleetTTL = 3 * time.Second
	// fleetSweep is one sweep: how long after a member's lease ends the
	// gateways still running may take to mark its tasks. A gateway
	// sweeps once a lease TTL (beside watching the members).
	fleetSweep = fleetTTL
	// fleetPinned is how many long tasks of a batch ask for the gateway
	// that is to go.
	fleetPinned = 4
	// fleetSlack is the margin a loaded 2-core machine needs on top.
	fleetSlack = 10 * time.Second
)

// TestThreeGatewaysShareOneEtcd is issue 20's acceptance run: three real
// gateway processes on one embedded etcd share 300 tasks and 50 pipeline
// flows with approval gates. One gateway is SIGKILLed mid-run, another
// stopped gracefully, and a fourth joins and takes work. Every flow
// settles; a ledger that every command appends to proves that no task
// ran twice unless its retry policy says it is safe to repeat; the
// running tasks of the killed gateway, and of the stopped one, are
// marked lost or queued again within one lease TTL plus one sweep; and
// every gate is answered, through the API or the CLI, from a gateway
// other than the one that parked the flow there, the killed and the
// stopped ones' gates included.
func TestThreeGatewaysShareOneEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real gateway processes on an embedded etcd")
	}
	f := newFleet(t, fleetTTL)
	runs := filepath.Join(f.work, "ledger")
	record := `echo "$FLOWGATE_TASK_ID $FLOWGATE_ATTEMPT" >>` + runs
	wf := filepath.Join(f.work, "gated.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: gated
steps:
  - id: one
    run: '`+record+`; echo one'
  - id: gate
    approval: Go on?
  - id: two
    run: '`+record+`; echo two'
`), 0o600))

	a, b, c := f.join("a"), f.join("b"), f.join("c")
	live := []*fleetMember{a, b, c}
	ctx := context.Background()

	state, err := flows.Invocation{File: wf, Cwd: f.work}.State()
	require.NoError(t, err)
	g := &gatekeeper{f: f, logs: newDeliveries(f), index: map[string]int{}, by: map[string]string{}, parked: map[string]int{}}
	for i := range fleetFlows {
		fl, err := live[i%3].api.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: flows.PipelineController,
			OwnerKey: "fleet", Goal: fmt.Sprintf("flow-%02d", i), State: state})
		require.NoError(t, err)
		g.index[fl.ID] = i
	}
	// The tasks come in three batches, half, a quarter and a quarter,
	// so that every phase has work however fast a loaded machine runs
	// the earlier ones: the gateway stopped and the one joining get some.
	// A batch queued for a gateway that is to go starts with a few long
	// tasks that ask for it by label (--on), so that it runs some when
	// it goes; the gateway that joins carries those labels too, and runs
	// the ones queued again. Their six seconds start only once the whole
	// batch is queued (they wait for a release file, a minute at most):
	// on a loaded machine queueing the batch can take longer than that,
	// and they would end before anyone looked.
	queued := 0
	queue := func(upTo int, via []*fleetMember, pinned *fleetMember) {
		var release string
		if pinned != nil {
			release = filepath.Join(f.work, "release-"+pinned.name)
			defer func() { require.NoError(t, os.WriteFile(release, nil, 0o600)) }()
		}
		for first := queued; queued < upTo; queued++ {
			i := queued
			in := apitype.CreateTaskInput{OwnerKey: "fleet", Label: fmt.Sprintf("task-%03d", i), Spec: sdk.TaskSpec{Cwd: f.work,
				Shell: fmt.Sprintf("%s; sleep %.2f", record, 0.5+float64(i%8)*0.15)}}
			if pinned != nil && i < first+fleetPinned {
				in.Spec.On = pinned.name
				in.Spec.Shell = fmt.Sprintf("%s; n=0; while [ ! -e %s ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done; sleep 6", record, release)
			}
			if i%3 == 0 {
				in.Spec.Retry = &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(100 * time.Millisecond), SafeToRepeat: true}
			}
			_, created, err := via[i%len(via)].api.RunTask(ctx, in)
			require.NoError(t, err)
			require.True(t, created)
		}
	}
	queue(fleetTasks/2, live, a)

	// While all three run, the first 15 gates are answered as they open.
	g.upTo = 15
	g.drive(live, time.Minute, "gateway a to run the tasks that ask for it, while others have ended", func(ts []*stored.Task) bool {
		return len(runningOn(ts, a.id)) >= fleetPinned && countOf(ts, func(t *stored.Task) bool { return t.Status.Terminal() }) >= 10
	})
	a.kill(t)
	killed := time.Now()
	live = []*fleetMember{b, c}
	g.upTo = 30
	orphans := g.takeover(live, a, killed, runningOn(f.tasks(), a.id))

	queue(fleetTasks*3/4, live, b)
	ts := g.drive(live, time.Minute, "gateway b to run the tasks that ask for it", func(ts []*stored.Task) bool {
		return len(runningOn(ts, b.id)) >= fleetPinned
	})
	b.stop(t)
	require.True(t, b.cmd.ProcessState.Success(), "gateway %s stopped with %v", b.name, b.cmd.ProcessState)
	stopped := time.Now()
	require.False(t, f.isMember(b), "a gateway that stops leaves the installation at once")
	live = []*fleetMember{c}
	d := f.join("d", a.name, b.name)
	live = append(live, d)
	g.upTo = fleetFlows
	orphans = append(orphans, g.takeover(live, b, stopped, runningOn(ts, b.id))...)
	queue(fleetTasks, live, nil)
	g.drive(live, 3*time.Minute, "every task and flow to settle", func(ts []*stored.Task) bool {
		return countOf(ts, func(t *stored.Task) bool { return t.Status.Active() }) == 0 && g.settled()
	})

	gone := map[string]bool{a.id: true, b.id: true}
	tasks := f.tasks()
	checkFleetLedger(t, tasks, fleetLedger(t, runs), gone)
	require.NotZero(t, countOf(tasks, func(t *stored.Task) bool { return t.Gateway == d.id }), "the gateway that joined ran tasks")
	for _, o := range orphans {
		now, err := f.eng.GetTask(o.ID)
		require.NoError(t, err)
		switch {
		case now.Status == sdk.TaskLost:
			require.Contains(t, strings.Join(now.Errors, "\n"), o.Gateway, "task %s: the lost mark names its gateway", o.ID)
		case now.Attempts > o.Attempts:
			require.True(t, safeToRepeat(now), "task %s of gateway %s ran again: %s", o.ID, o.Gateway, now.Status)
		default: // it ended before its gateway stopped
			require.Equal(t, o.Gateway, now.Gateway, "task %s", o.ID)
		}
	}
	g.check(t, gone)
	require.ElementsMatch(t, []string{a.name, b.name, c.name, d.name}, g.answerers(), "every gateway answered gates")
	require.NotZero(t, g.orphaned, "gates parked by the killed or the stopped gateway were answered by others")

	out, err := exec.Command(f.bin, "--store", f.url, "cluster", "status", "--json").Output()
	require.NoError(t, err)
	var st cli.ClusterStatus
	require.NoError(t, json.Unmarshal(out, &st))
	var ids []string
	for _, m := range st.Members {
		ids = append(ids, m.ID)
	}
	require.ElementsMatch(t, []string{c.id, d.id}, ids, "the killed and the stopped gateways left the installation")
}

// gatekeeper answers the gates of the run's pipeline flows as they open,
// each through a live gateway other than the one that parked the flow
// there, taking turns among them and between the API and the CLI.
type gatekeeper struct {
	f    *fleet
	logs *deliveries
	// index numbers the pipeline flows by their id.
	index map[string]int
	// upTo is how many flows' gates are answered: those numbered below.
	upTo int
	// by names the member whose gateway answered each flow's gate.
	by map[string]string
	// parked counts the gates answered by the member that parked them.
	parked map[string]int
	// orphaned counts the gates answered after the gateway that parked
	// the flow there was killed or stopped.
	orphaned int
	turn     int
}

// drive answers gates through live until cond holds of the tasks, and
// returns the tasks it held of; after d it fails the test with where the
// tasks and gates stand.
func (g *gatekeeper) drive(live []*fleetMember, d time.Duration, what string, cond func([]*stored.Task) bool) []*stored.Task {
	t := g.f.t
	t.Helper()
	var ts []*stored.Task
	polltest.Until(t, "", func() (bool, string) {
		g.pass(live)
		ts = g.f.tasks()
		return cond(ts), fmt.Sprintf("waiting for %s; tasks by status and gateway: %v; %d gates answered", what, tally(ts), len(g.by))
	}, polltest.Within(d), polltest.Every(50*time.Millisecond))
	return ts
}

// takeover returns orphans, the tasks gone ran when it was killed or
// stopped at since, after it waited (answering gates through live) until
// the gateways still running marked each lost or queued it again, which
// must take less than one lease TTL plus one sweep (and a margin).
func (g *gatekeeper) takeover(live []*fleetMember, gone *fleetMember, since time.Time, orphans []*stored.Task) []*stored.Task {
	t := g.f.t
	t.Helper()
	require.NotEmpty(t, orphans, "gateway %s had running tasks when it went", gone.name)
	bound := fleetTTL + fleetSweep + fleetSlack
	g.drive(live, bound, "gateway "+gone.name+"'s running tasks to be marked lost or queued again", func(ts []*stored.Task) bool {
		return len(runningOn(ts, gone.id)) == 0
	})
	took := time.Since(since)
	t.Logf("gateway %s's %d running tasks were taken over %s after it went (lease %s, sweep %s)", gone.name, len(orphans), took.Round(time.Millisecond), fleetTTL, fleetSweep)
	require.Less(t, took, bound)
	return orphans
}

// tally counts tasks by status and the gateway that started them.
func tally(tasks []*stored.Task) map[string]int {
	n := map[string]int{}
	for _, t := range tasks {
		n[string(t.Status)+"@"+t.Gateway]++
	}
	return n
}

// pass answers each open gate it may once.
func (g *gatekeeper) pass(live []*fleetMember) {
	t := g.f.t
	t.Helper()
	gates, err := g.f.eng.OpenGates(engine.GateFilter{ControllerID: flows.PipelineController})
	require.NoError(t, err)
	for _, gate := range gates {
		if i, ok := g.index[gate.FlowID]; !ok || i >= g.upTo || g.by[gate.FlowID] != "" {
			continue
		}
		parker := g.logs.parker(gate.FlowID, gate.Since)
		if parker == nil {
			continue // the delivery that parked it is not in its gateway's log yet
		}
		g.turn++
		m := live[g.turn%len(live)]
		if m == parker {
			m = live[(g.turn+1)%len(live)]
		}
		if m.approve(t, g.f.bin, gate.FlowID, gate.Revision, m.name, g.turn%2 == 0) {
			g.by[gate.FlowID] = m.name
			g.parked[parker.name]++
			if !slices.Contains(live, parker) {
				g.orphaned++
			}
		}
	}
}

// settled says whether every flow of the installation has ended.
func (g *gatekeeper) settled() bool {
	page, err := g.f.eng.ListFlows(engine.FlowFilter{})
	require.NoError(g.f.t, err)
	return countOf(page.Flows, func(f *sdk.Flow) bool { return !f.Status.Terminal() }) == 0
}

// check asserts how each pipeline flow ended: it succeeded after both
// steps ran and its gate was answered by the gateway the gatekeeper
// chose, or it failed because a step's task was lost with a gateway that
// is gone.
func (g *gatekeeper) check(t *testing.T, gone map[string]bool) {
	t.Helper()
	succeeded := 0
	for id := range g.index {
		v, err := g.f.eng.ViewFlow(id)
		require.NoError(t, err)
		if v.Status != sdk.FlowSucceeded {
			require.Equal(t, sdk.FlowFailed, v.Status, "flow %s", id)
			lost := slices.IndexFunc(v.Tasks, func(t *stored.Task) bool { return t.Status == sdk.TaskLost && gone[t.Gateway] })
			require.GreaterOrEqual(t, lost, 0, "flow %s failed, but not by losing a step with a gateway: %s", id, v.BlockedSummary)
			continue
		}
		succeeded++
		require.Len(t, v.Tasks, 2, "flow %s ran each step once", id)
		var st struct {
			Results map[string]struct {
				ApprovedBy string `json:"approvedBy"`
			} `json:"results"`
		}
		require.NoError(t, json.Unmarshal(v.State, &st))
		require.NotEmpty(t, g.by[id], "flow %s passed a gate nobody answered", id)
		require.Equal(t, g.by[id], st.Results["gate"].ApprovedBy, "flow %s", id)
	}
	t.Logf("%d of %d pipeline flows succeeded, the others lost a step with a gateway; gates parked by each gateway: %v, %d answered after it was gone",
		succeeded, len(g.index), g.parked, g.orphaned)
	require.NotZero(t, succeeded)
}

// answerers lists the members that answered gates.
func (g *gatekeeper) answerers() []string {
	var names []string
	for _, n := range g.by {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// checkFleetLedger asserts that every task ended, that a task that succeeded
// ran, and that no task ran more than once unless its retry policy marks
// it safe to repeat (then at most its attempts); a lost task names the
// gateway that ran it, which is gone.
func checkFleetLedger(t *testing.T, tasks []*stored.Task, runs map[string]int, gone map[string]bool) {
	t.Helper()
	require.Equal(t, fleetTasks, countOf(tasks, func(t *stored.Task) bool { return strings.HasPrefix(t.Label, "task-") }), "every task is listed")
	again := 0
	for _, task := range tasks {
		n := runs[task.ID]
		require.True(t, task.Status.Terminal(), "task %s is %s", task.ID, task.Status)
		if task.Status == sdk.TaskSucceeded {
			require.GreaterOrEqual(t, n, 1, "task %s succeeded without running", task.ID)
		}
		if task.Status == sdk.TaskLost {
			require.True(t, gone[task.Gateway], "task %s was lost on gateway %q, which is still a member", task.ID, task.Gateway)
		}
		if !safeToRepeat(task) {
			require.LessOrEqual(t, n, 1, "task %s (%s) ran %d times, and its policy does not say that is safe; it is %s after %d attempts, last on %s: %q",
				task.ID, task.Label, n, task.Status, task.Attempts, task.Gateway, task.Errors)
			continue
		}
		require.LessOrEqual(t, n, task.Spec.Retry.MaxAttempts, "task %s", task.ID)
		if n > 1 {
			again++
		}
	}
	t.Logf("%d tasks safe to repeat ran again", again)
}

// safeToRepeat says whether task's retry policy lets it run again after
// it was lost.
func safeToRepeat(task *stored.Task) bool {
	return task.Spec.Retry != nil && task.Spec.Retry.SafeToRepeat
}

// runningOn lists the running tasks that gateway started.
func runningOn(tasks []*stored.Task, gateway string) []*stored.Task {
	var out []*stored.Task
	for _, t := range tasks {
		if t.Status == sdk.TaskRunning && t.Gateway == gateway {
			out = append(out, t)
		}
	}
	return out
}

// countOf counts the elements of s for which keep holds.
func countOf[T any](s []T, keep func(T) bool) int {
	n := 0
	for _, v := range s {
		if keep(v) {
			n++
		}
	}
	return n
}
