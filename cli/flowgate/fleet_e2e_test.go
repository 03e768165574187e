package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// fleet is one installation on an embedded etcd, served by real
// `flowgate gateway` processes on this machine, each with a home of its
// own. The test reads the records straight from etcd (eng), as any
// machine could, so that what it sees never depends on a gateway it
// killed.
type fleet struct {
	t   *testing.T
	bin string
	embeddedInstallation
	work string // ledgers and gateway logs
	ttl  time.Duration
	// members are the gateways that joined, in order, dead ones too.
	members []*fleetMember
}

// fleetMember is one gateway process of a fleet: kill, stop and signal
// it as a gatewayProc.
type fleetMember struct {
	*gatewayProc
	// name is the member's name in the test and its first label.
	name string
	// id is its member id in the installation (host.pid).
	id  string
	api api.Client
	// log is the path of the gateway's log (level debug).
	log string
}

// newFleet builds the binary, starts an embedded etcd (loopback ports,
// its data in a temporary directory) and returns an installation on a
// fresh prefix whose gateways hold leases of ttl.
func newFleet(t *testing.T, ttl time.Duration) *fleet {
	t.Helper()
	bin := buildFlowgate(t)
	return &fleet{t: t, bin: bin, embeddedInstallation: startEtcdInstallation(t), work: t.TempDir(), ttl: ttl}
}

// embeddedInstallation is an installation on a fresh prefix of an
// embedded etcd that the test process runs, read directly.
type embeddedInstallation struct {
	srv    *etcdtest.Server
	prefix string
	url    string // what gateways and commands name it by
	es     *etcd.Store
	eng    *engine.Engine
}

// startEtcdInstallation starts an embedded etcd (loopback ports, its
// data in a temporary directory) and opens an installation on it; both
// are closed when the test ends.
func startEtcdInstallation(t *testing.T) embeddedInstallation {
	t.Helper()
	srv, err := etcdtest.Start()
	require.NoError(t, err)
	// Registered first, so it runs last: after every gateway is gone.
	t.Cleanup(func() { srv.Close() })
	prefix := srv.Prefix() // each call gives a new prefix: take one
	es, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	t.Cleanup(func() { es.Close() })
	eng, err := engine.New(es, engine.Config{})
	require.NoError(t, err)
	return embeddedInstallation{srv: srv, prefix: prefix, url: "etcd://" + srv.Endpoint() + prefix, es: es, eng: eng}
}

// join starts a gateway named name, labelled name and more, on a home of its own
// whose gateway.yaml names the installation and the lease, waits until
// its socket answers and it is a member, and returns it. Its log is
// printed, the last lines, if the test fails.
func (f *fleet) join(name string, more ...string) *fleetMember {
	t := f.t
	t.Helper()
	home, err := os.MkdirTemp("", "fgf"+name) // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	labels := strings.Join(append([]string{name}, more...), ", ")
	cfg := fmt.Sprintf("store: %s\ncluster:\n  labels: [%s]\n  lease_ttl: %s\n", f.url, labels, f.ttl)
	require.NoError(t, os.WriteFile(filepath.Join(home, gateway.ConfigFile), []byte(cfg), 0o600))
	return f.startOn(name, home)
}

// rejoin starts a gateway again on the home of m, a gateway that is gone
// or no longer a member, as join does, and returns it; its log is
// gateway-NAME.log in the work directory, NAME m's name and a number.
func (f *fleet) rejoin(m *fleetMember) *fleetMember {
	f.t.Helper()
	again := f.startOn(fmt.Sprintf("%s.%d", m.name, len(f.members)), m.home)
	again.name = m.name
	return again
}

// startOn starts a gateway named name on home, whose gateway.yaml is
// written, and waits until its socket answers and it is a member.
func (f *fleet) startOn(name, home string) *fleetMember {
	t := f.t
	t.Helper()
	logf, err := os.Create(filepath.Join(f.work, "gateway-"+name+".log"))
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("gateway %s log (last lines):\n%s", name, lastLines(b, 80))
		}
		logf.Close()
	})
	m := &fleetMember{gatewayProc: startGateway(t, f.bin, home, logf), name: name, log: logf.Name()}
	f.members = append(f.members, m)
	t.Cleanup(m.reap)
	pid := m.cmd.Process.Pid
	polltest.Until(t, "gateway "+name+" to register as a member", func() bool {
		members, err := f.es.Members(context.Background())
		for _, rec := range members {
			if err == nil && rec.PID == pid {
				m.id = rec.ID
			}
		}
		return m.id != ""
	}, polltest.Within(20*time.Second), polltest.Every(50*time.Millisecond))
	m.api, err = api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	t.Cleanup(func() { m.api.Close() })
	return m
}

// isMember says whether m is a member of the installation now.
func (f *fleet) isMember(m *fleetMember) bool {
	f.t.Helper()
	rec, err := f.es.Member(context.Background(), m.id)
	require.NoError(f.t, err)
	return rec != nil
}

// logged says whether the member's gateway log holds s.
func (m *fleetMember) logged(s string) bool {
	b, err := os.ReadFile(m.log)
	return err == nil && bytes.Contains(b, []byte(s))
}

// slowProbe is what a command says when the gateway it found did not
// answer its first request in time.
const slowProbe = "did not answer a health check"

// approve answers the gate of flow through the member's gateway, as by:
// over the API when cli is false, else with `flowgate --home HOME tasks
// flow approve`. A flow that moved since (rev) is left for the next pass.
func (m *fleetMember) approve(t *testing.T, bin, flow string, rev int64, by string, cli bool) bool {
	t.Helper()
	if cli {
		out, err := exec.Command(bin, "--home", m.home, "tasks", "flow", "approve", flow,
			"--by", by, "--expected-revision", fmt.Sprint(rev)).CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 { // a revision conflict
			return false
		}
		if bytes.Contains(out, []byte(slowProbe)) {
			// The command's first request, the gateway's status, counts
			// every task and flow in etcd, within a second; a loaded
			// machine can take longer. Not what this test is about.
			t.Logf("approve %s through gateway %s: the gateway was slow to answer; trying again on a later pass: %s", flow, m.name, out)
			return false
		}
		require.NoError(t, err, "approve %s through gateway %s: %s", flow, m.name, out)
		return true
	}
	yes := true
	_, err := m.api.DecideGate(context.Background(), apitype.GateDecision{Flow: flow, Kind: sdk.GateApproval, Expected: &rev,
		Decision: sdk.Decision{Approved: &yes, By: by}})
	var conflict *sdk.RevisionConflictError
	if errors.As(err, &conflict) {
		return false
	}
	require.NoError(t, err, "approve %s through gateway %s", flow, m.name)
	return true
}

// tasks lists every task of the installation.
func (f *fleet) tasks() []*stored.Task {
	f.t.Helper()
	page, err := f.eng.ListTasks(engine.TaskFilter{})
	require.NoError(f.t, err)
	return page.Tasks
}

// fleetLedger counts the lines of the ledger file by their first word (a
// task id): how many times each task's command ran.
func fleetLedger(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	runs := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if id, _, ok := strings.Cut(line, " "); ok {
			runs[id]++
		}
	}
	return runs
}

// lastLines is the last n lines of b.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
