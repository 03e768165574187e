//go:build unix

package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/scheduler"
)

// addEverySecond adds, through g, a cron job named name that runs every
// second and appends its scheduled time to ledger; runs may overlap, and
// catchUp is its --catchup-window ("" for the default). It returns the
// job's id.
func (in *etcdInstall) addEverySecond(g *fleetMember, name, ledger, catchUp string) string {
	in.t.Helper()
	args := []string{"--home", g.home, "cron", "add", "--json", "--name", name, "--every", "1s", "--overlap", "allow_all",
		"--command", `echo "$FLOWGATE_CRON_SCHEDULED" >> ` + ledger}
	if catchUp != "" {
		args = append(args, "--catchup-window", catchUp)
	}
	var j apitype.CronJob
	require.NoError(in.t, json.Unmarshal([]byte(flowgate(in.t, in.bin, args...)), &j))
	return j.ID
}

// storedRun is a run as the store holds it, with the etcd revision that
// created its record: the claim of its time, or its record as missed.
type storedRun struct {
	apitype.CronRun
	created int64
}

// runs reads job's run history straight from etcd, oldest first.
func (in *etcdInstall) runs(job string) []storedRun {
	in.t.Helper()
	resp, err := in.srv.Client().Get(context.Background(), in.prefix+"cron/run/"+job+"/", clientv3.WithPrefix())
	require.NoError(in.t, err)
	var out []storedRun
	for _, kv := range resp.Kvs {
		r := storedRun{created: kv.CreateRevision}
		require.NoError(in.t, json.Unmarshal(kv.Value, &r.CronRun))
		out = append(out, r)
	}
	return out
}

// history is job's run history as `flowgate cron runs --json` shows it,
// newest first, read with --store (no gateway needed).
func (in *etcdInstall) history(job string) []apitype.CronRun {
	in.t.Helper()
	var list struct {
		Runs []apitype.CronRun `json:"runs"`
	}
	require.NoError(in.t, json.Unmarshal([]byte(flowgate(in.t, in.bin, "--store", in.url, "cron", "runs", job, "--json", "--limit", "0")), &list))
	return list.Runs
}

// firedBy counts the runs of rs that member claimed (missed ones aside).
func firedBy(rs []storedRun, member string) int {
	n := 0
	for _, r := range rs {
		if r.Member == member && r.Status != scheduler.RunMissed {
			n++
		}
	}
	return n
}

// waitFired waits, bounded, until member has fired n runs of job.
func (in *etcdInstall) waitFired(job, member string, n int) {
	in.t.Helper()
	polltest.Until(in.t, fmt.Sprintf("%s to fire %d runs", member, n), func() bool { return firedBy(in.runs(job), member) >= n }, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
}

// between waits, bounded, until g has just fired every one of jobs and
// the tasks of their open runs have all ended: a moment between two
// fires, with no task in flight. The leader is paused, killed or stopped
// then, because a task in flight is lost with its gateway (processes are
// local to the gateway that started them), its run is interrupted, and
// an interrupted run is a failure: the job would wait out its failure
// backoff (30 s) and fire nothing meanwhile.
func (in *etcdInstall) between(g *fleetMember, jobs ...string) {
	in.t.Helper()
	idle := func(job string) bool {
		rs := in.runs(job)
		if len(rs) == 0 || rs[len(rs)-1].Member != g.id {
			return false
		}
		for _, r := range rs {
			if !r.Open() {
				continue
			}
			if r.TaskID == "" {
				return false
			}
			task, err := in.eng.GetTask(r.TaskID)
			if err != nil || !task.Status.Terminal() {
				return false
			}
		}
		return true
	}
	polltest.Until(in.t, g.name+" to be between two fires", func() bool {
		for _, job := range jobs {
			if !idle(job) {
				return false
			}
		}
		return true
	}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
}

// settle disables job (through g) and waits, bounded, until none of its
// runs is open; it returns the history then.
func (in *etcdInstall) settle(g *fleetMember, job string) []storedRun {
	in.t.Helper()
	flowgate(in.t, in.bin, "--home", g.home, "cron", "disable", job)
	var rs []storedRun
	polltest.Until(in.t, "every run to end", func() bool {
		rs = in.runs(job)
		return !slices.ContainsFunc(rs, func(r storedRun) bool { return r.Open() })
	}, polltest.Within(60*time.Second), polltest.Every(50*time.Millisecond))
	return rs
}

// checkLedger checks that no scheduled time ran twice (each line of
// ledger is unique) and that the ledger and the history agree: every
// line is a run that ended ok, and every run that ended ok ran.
func checkLedger(t *testing.T, ledger string, rs []storedRun) {
	t.Helper()
	b, err := os.ReadFile(ledger)
	require.NoError(t, err)
	status := map[string]string{}
	ok := 0
	for _, r := range rs {
		status[r.Scheduled.UTC().Format(time.RFC3339Nano)] = r.Status
		if r.Status == scheduler.RunOK {
			ok++
		}
	}
	seen := map[string]bool{}
	for _, l := range strings.Fields(string(b)) {
		require.False(t, seen[l], "scheduled time %s ran twice", l)
		seen[l] = true
		require.Equal(t, scheduler.RunOK, status[l], "scheduled time %s ran, but its run is %q in the history", l, status[l])
	}
	require.Len(t, seen, ok, "runs that ended ok without running")
}

// TestPausedCronLeaderCannotFireAfterItsLease: gateway a leads cron for
// an --every 1s job, and is paused with SIGSTOP past its lease, as a
// gateway cut off from etcd would be. Gateway b, which campaigns beside
// a, takes over. a is resumed
// as soon as b leads, before b's first fire, still believing for a moment
// that it leads, so the two race for the next due times. The run history
// and the store prove that a recorded no fire after its lease ended:
// each run names the member that claimed it, and every run a claimed was
// created in etcd before a's leader key was deleted. The ledger proves
// that no time ran twice.
//
// What stops a is the fence on its leadership: it sees its leader key
// deleted before its next claim, and a claim already under way when it
// was paused is refused by etcd (the fence compare), which
// TestDeposedLeaderCannotFire in host/scheduler proves deterministically.
func TestPausedCronLeaderCannotFireAfterItsLease(t *testing.T) {
	in := newEtcdInstall(t)
	ledger := filepath.Join(in.work, "ledger")
	a := in.join("a")
	job := in.addEverySecond(a, "tick", ledger, "")
	require.Equal(t, a.id, in.waitLeader())
	in.waitFired(job, a.id, 2)

	b := in.join("b")
	in.between(a, job)
	a.signal(t, syscall.SIGSTOP)
	paused := time.Now()
	require.Equal(t, b.id, in.waitLeader(a.id))
	// The test's own watch hears of the deletion a moment after etcd
	// made it; b can lead only once a's key is gone, so it must come.
	polltest.Until(t, "the watch to see a's leader key deleted (else b leads while a's key lives)", func() bool { return in.fences.end(a.id) != 0 }, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	t.Logf("b leads %s after a was paused", time.Since(paused).Round(time.Millisecond))
	a.signal(t, syscall.SIGCONT)
	polltest.Until(t, "a to see that its lease ended", func() bool { return a.logged("the etcd installation (its lease ended)") }, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	in.waitFired(job, b.id, 3)
	rs := in.settle(b, job)
	b.stop(t)
	a.stop(t)
	require.True(t, a.cmd.ProcessState.Success(), "a gateway stopped after its lease ended exits cleanly: %v", a.cmd.ProcessState)

	end := in.fences.end(a.id)
	byA := 0
	for _, r := range rs {
		if r.Member == a.id {
			byA++
			require.Less(t, r.created, end, "a recorded %s (%s) at etcd revision %d, after its leadership ended at %d", r.ID, r.Status, r.created, end)
		}
	}
	require.NotZero(t, byA, "a fired nothing before it was paused")
	history := in.history(job)
	require.Len(t, history, len(rs))
	for i, r := range history {
		require.Equal(t, rs[len(rs)-1-i].ID, r.ID)
		require.Equal(t, rs[len(rs)-1-i].Member, r.Member, "cron runs --json names the member that fired %s", r.ID)
	}
	checkLedger(t, ledger, rs)
	t.Logf("a fired %d runs before its lease ended at revision %d; b fired %d; a's claims refused by the fence: %v",
		byA, end, firedBy(rs, b.id), a.logged("fence no longer holds"))
}

// TestCronFiresOnceAcrossTwoLeaderChanges: three gateway processes take
// the lead of cron in turn (the first is killed with SIGKILL, the second
// stopped gracefully, each time the next takes over) while two --every
// 1s jobs run. Checked against the run history, the store and a ledger
// of what ran:
//
//   - no scheduled time ran twice, and every run that ended ok ran;
//   - the history holds every scheduled time from the first to the last,
//     once: each leader fired every time due while it led;
//   - each time was recorded by the leader of the moment, while it led
//     (etcd revisions against the leader keys' deletions), the leaders
//     in turn;
//   - the misfire policy held for the gaps between leaders. With
//     --catchup-window 1m, the next leader runs every time of the gap,
//     late, so nothing is missed. With the default (no window), it runs
//     the latest time due and records the earlier ones "missed"; so a
//     missed time is only ever recorded by the leader that took over,
//     after another leader's last run, just before its own first run.
func TestCronFiresOnceAcrossTwoLeaderChanges(t *testing.T) {
	in := newEtcdInstall(t)
	a := in.join("a")
	type cronJob struct {
		id, ledger string
		caughtUp   bool
	}
	var jobs []cronJob
	for _, caughtUp := range []bool{true, false} {
		j := cronJob{ledger: filepath.Join(in.work, fmt.Sprintf("ledger-%v", caughtUp)), caughtUp: caughtUp}
		window := ""
		if caughtUp {
			window = "1m"
		}
		j.id = in.addEverySecond(a, fmt.Sprintf("catch-up-%v", caughtUp), j.ledger, window)
		jobs = append(jobs, j)
	}
	require.Equal(t, a.id, in.waitLeader())
	fireAll := func(g *fleetMember) {
		t.Helper()
		for _, j := range jobs {
			in.waitFired(j.id, g.id, 3)
		}
	}
	fireAll(a)

	ids := []string{jobs[0].id, jobs[1].id}
	b := in.join("b")
	in.between(a, ids...)
	a.kill(t)
	require.Equal(t, b.id, in.waitLeader(a.id))
	fireAll(b)

	c := in.join("c")
	in.between(b, ids...)
	b.stop(t)
	require.Equal(t, c.id, in.waitLeader(a.id, b.id))
	fireAll(c)

	leaders := []string{a.id, b.id, c.id}
	for _, j := range jobs {
		rs := in.settle(c, j.id)
		checkLedger(t, j.ledger, rs)
		checkLeaders(t, in.fences, leaders, rs)
		checkTimes(t, rs, j.caughtUp)
		t.Logf("job %s (catch-up window: %v): %d times, %d by a, %d by b, %d by c", j.id, j.caughtUp, len(rs), firedBy(rs, a.id), firedBy(rs, b.id), firedBy(rs, c.id))
	}
	c.stop(t)
}

// checkLeaders checks that each run (oldest first) was recorded by one of
// leaders, in their turn, while it led: after the leadership before its
// own ended, and before its own ended.
func checkLeaders(t *testing.T, fences *fenceLog, leaders []string, rs []storedRun) {
	t.Helper()
	turn := 0
	for _, r := range rs {
		i := slices.Index(leaders, r.Member)
		require.GreaterOrEqual(t, i, turn, "%s (%s) was recorded by %q, out of the leaders' turn %v", r.ID, r.Status, r.Member, leaders)
		turn = i
		if i > 0 {
			require.Greater(t, r.created, fences.end(leaders[i-1]), "%s was recorded by %s before %s's leadership ended", r.ID, r.Member, leaders[i-1])
		}
		if end := fences.end(r.Member); end != 0 {
			require.Less(t, r.created, end, "%s was recorded by %s after its leadership ended", r.ID, r.Member)
		}
	}
}

// describe lists rs one a line, for a failure's message.
func describe(rs []storedRun) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s %-11s by %s at revision %d\n", r.Scheduled.Format("15:04:05.000"), r.Status, r.Member, r.created)
	}
	return b.String()
}

// checkTimes checks that rs (oldest first) holds every scheduled time of
// an --every 1s job from its first to its last, once, and that the
// misfire policy held: with a catch-up window no time is missed; without
// one a time is missed only in a gap between two leaders, recorded by the
// new leader, whose first run follows it.
func checkTimes(t *testing.T, rs []storedRun, caughtUp bool) {
	t.Helper()
	for i := 1; i < len(rs); i++ {
		require.Equal(t, time.Second, rs[i].Scheduled.Sub(rs[i-1].Scheduled), "the history skips from %s to %s", rs[i-1].Scheduled, rs[i].Scheduled)
	}
	fired := func(r storedRun) bool { return r.Status != scheduler.RunMissed }
	for i, r := range rs {
		if fired(r) {
			require.Equal(t, scheduler.RunOK, r.Status, "%s fired but did not end ok: %s", r.ID, r.Error)
			continue
		}
		require.False(t, caughtUp, "%s is missed although the catch-up window covers every gap", r.ID)
		before := -1
		for j := i - 1; j >= 0 && before < 0; j-- {
			if fired(rs[j]) {
				before = j
			}
		}
		after := slices.IndexFunc(rs[i:], fired)
		require.NotEqual(t, -1, after, "%s is missed after the last run", r.ID)
		after += i
		require.Equal(t, rs[after].Member, r.Member, "%s was recorded missed by %s, not by the leader that ran the next time", r.ID, r.Member)
		require.NotEqual(t, -1, before, "%s is missed before the first run", r.ID)
		require.NotEqual(t, rs[before].Member, r.Member, "%s was missed while %s led: a leader let a time due pass; the history:\n%s", r.ID, r.Member, describe(rs))
	}
}
