package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// The controller round-trip benchmark's fixed workload.
const (
	rtRounds         = 5    // interleaved rounds of the four variants
	rtCalls          = 2000 // timed HandleEvent calls per round and variant
	rtWarmup         = 200  // untimed calls per variant before the first round
	rtRedeliverEvery = 100  // every 100th event is delivered again, untimed
	rtController     = "bench"
	rtTimeout        = 5 * time.Second // per call, as the deliverer's Timeout
	rtProbe          = 200 * time.Millisecond
)

// rtGetFlow is the sdk.Event.Data that makes benchController read its flow
// instead of creating a task.
const rtGetFlow = `"get_flow"`

// benchController is the controller of BenchmarkControllerRoundTrip, served
// by the test binary in mode "bench" (servePlugin) and called directly for
// the in-process variants. Each event makes exactly one host call: it
// creates a task in the event's flow, with an idempotency key derived from
// the event's seq, or, when the event's data is rtGetFlow, reads the flow.
type benchController struct{}

func (benchController) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: rtController, Version: "test", APIVersion: sdk.APIVersion}, nil
}

func (benchController) Shutdown(context.Context) error { return nil }

func (benchController) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	if string(ev.Data) == rtGetFlow {
		_, err := h.GetFlow(ctx, ev.FlowID)
		return err
	}
	_, _, err := h.CreateTask(ctx, sdk.TaskRequest{FlowID: ev.FlowID, IdempotencyKey: rtKey(ev.FlowID, ev.Seq),
		Label: "bench", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	return err
}

func rtKey(flowID string, seq int64) string { return flowID + ":" + strconv.FormatInt(seq, 10) }

// benchHost is the gateway side of the callbacks: the gateway's own host
// (pluginhost.NewHost), wrapped to count the calls benchController makes,
// GetFlow and CreateTask, and to note when the last one began and ended.
type benchHost struct {
	sdk.Host

	gets, created, existing atomic.Int64
	in, out                 atomic.Int64 // the last call's start and end: ns since base
	base                    time.Time
}

// since is the time since h.base in ns, on the monotonic clock.
func (h *benchHost) since() int64 { return int64(time.Since(h.base)) }

// enter notes the start of a call; the returned function notes its end.
func (h *benchHost) enter() func() {
	h.in.Store(h.since())
	return func() { h.out.Store(h.since()) }
}

func (h *benchHost) GetFlow(ctx context.Context, flowID string) (*sdk.Flow, error) {
	defer h.enter()()
	h.gets.Add(1)
	return h.Host.GetFlow(ctx, flowID)
}

func (h *benchHost) CreateTask(ctx context.Context, req sdk.TaskRequest) (*sdk.Task, bool, error) {
	defer h.enter()()
	t, created, err := h.Host.CreateTask(ctx, req)
	if err == nil {
		if created {
			h.created.Add(1)
		} else {
			h.existing.Add(1)
		}
	}
	return t, created, err
}

// rtVariant is one way of delivering an event.
type rtVariant struct {
	name   string
	remote bool // through the plugin subprocess; else benchController directly
	get    bool // the callback is GetFlow; else CreateTask
}

var rtVariants = []rtVariant{
	{"remote", true, false}, {"inproc", false, false}, {"get-remote", true, true}, {"get-inproc", false, true},
}

// rtTimes are the timings of a set of calls, one sample per call: the
// whole call (total), split at the host callback's start and end into the
// way there (to), the callback's engine work (host) and the way back
// (back). In process, to and back are the controller's own few
// instructions.
type rtTimes struct{ total, to, host, back []time.Duration }

func (t *rtTimes) add(u rtTimes) {
	t.total, t.to = append(t.total, u.total...), append(t.to, u.to...)
	t.host, t.back = append(t.host, u.host...), append(t.back, u.back...)
}

// rtSamples collects one variant's figures over all rounds.
type rtSamples struct {
	rtTimes
	p50s               []time.Duration // of total, per round
	cpuSelf, cpuPlugin time.Duration
}

// BenchmarkControllerRoundTrip measures the controller round trip: the
// gateway calls HandleEvent, the controller calls back into the gateway
// once, and HandleEvent returns. The gateway side is a real engine on a
// real bbolt store in b.TempDir(); the controller is benchController.
//
//   - remote: the controller runs in a plugin subprocess (this test
//     binary in mode "bench") started by go-plugin with
//     pluginclient.Handshake and pluginclient.PluginSet and connected
//     with pluginclient.Connect, as the supervisor does; the clock runs
//     from HandleEvent on the pluginclient.Plugin until it returns:
//     encode, gRPC to the plugin, the plugin's CreateTask callback over
//     the brokered connection, the engine's commit, the callback's
//     reply, HandleEvent's reply.
//   - inproc: benchController.HandleEvent called directly with the same
//     host: no gRPC, the same engine work.
//   - get-remote, get-inproc: the same, with a GetFlow callback (a read
//     transaction, no commit), to isolate the transport's cost.
//
// rtRounds interleaved rounds of the four variants, rtCalls timed calls
// each, every (round, variant) on a fresh flow. It reports p50 and p99 of
// each variant over all rounds, the ratio of the p50s, each call split at
// the host callback into the way there, the engine work and the way back,
// CPU per call of this process and of the plugin, and the raw fsync rate
// of the store's directory.
//
// Correctness while measuring: every call must succeed; every
// rtRedeliverEvery-th event is delivered a second time (untimed) and must
// not create a task; each flow must end with exactly one task per
// distinct idempotency key, and the host must have counted exactly as many
// creates and repeats as were sent.
//
// The workload is fixed and b.N is ignored: run it with -benchtime 1x.
func BenchmarkControllerRoundTrip(b *testing.B) {
	dir := b.TempDir()
	st, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{Owner: "controller round-trip benchmark"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		b.Fatal(err)
	}
	h := &benchHost{Host: pluginhost.NewHost(eng, rtController, nil), base: time.Now()}
	conn, pluginPID, stop := startBenchPlugin(b, h)
	defer stop()

	r := &rtRun{b: b, eng: eng, h: h, conn: conn}
	for _, v := range rtVariants { // warm up: connections, caches, the store's pages
		r.round(v, rtWarmup)
	}
	samples := map[string]*rtSamples{}
	for _, v := range rtVariants {
		samples[v.name] = &rtSamples{}
	}
	var fsyncs []float64
	b.ResetTimer()
	for round := 1; round <= rtRounds; round++ {
		fs, err := store.ProbeFsync(dir, rtProbe)
		if err != nil {
			b.Fatal(err)
		}
		fsyncs = append(fsyncs, fs)
		line := fmt.Sprintf("round %d: fsync %.0f/s;", round, fs)
		for _, v := range rtVariants {
			self0, plug0 := selfCPU(), procCPU(pluginPID)
			res := r.round(v, rtCalls)
			s := samples[v.name]
			s.cpuSelf += selfCPU() - self0
			s.cpuPlugin += procCPU(pluginPID) - plug0
			s.add(res)
			p50 := percentile(res.total, 50)
			s.p50s = append(s.p50s, p50)
			line += fmt.Sprintf(" %s p50 %.3f p99 %.3f ms;", v.name, ms(p50), ms(percentile(res.total, 99)))
		}
		b.Log(line)
	}
	b.StopTimer()

	// go test shows only 9 lines of a benchmark's log in full: 5 rounds,
	// the two remote variants, the two in-process ones, ratios and machine.
	calls := float64(rtRounds * rtCalls)
	cpu := func(s *rtSamples) string {
		return fmt.Sprintf("CPU/call %.0f µs here + %.0f µs in the plugin", float64(s.cpuSelf.Microseconds())/calls, float64(s.cpuPlugin.Microseconds())/calls)
	}
	dist := func(s *rtSamples) string {
		return fmt.Sprintf("p50 %.3f ms, p90 %.3f, p99 %.3f, max %.3f", ms(percentile(s.total, 50)), ms(percentile(s.total, 90)),
			ms(percentile(s.total, 99)), ms(percentile(s.total, 100)))
	}
	for _, name := range []string{"remote", "get-remote"} {
		s := samples[name]
		b.Logf("%-10s %s; p50/p99 ms of: to the callback %.3f/%.3f, in the host %.3f/%.3f, back %.3f/%.3f; %s",
			name, dist(s), ms(percentile(s.to, 50)), ms(percentile(s.to, 99)), ms(percentile(s.host, 50)), ms(percentile(s.host, 99)),
			ms(percentile(s.back, 50)), ms(percentile(s.back, 99)), cpu(s))
	}
	b.Logf("inproc     %s; %s. get-inproc %s; %s", dist(samples["inproc"]), cpu(samples["inproc"]), dist(samples["get-inproc"]), cpu(samples["get-inproc"]))
	ratios := func(a, c string) string {
		var parts []string
		for i := range rtRounds {
			parts = append(parts, fmt.Sprintf("%.2f", float64(samples[a].p50s[i])/float64(samples[c].p50s[i])))
		}
		return strings.Join(parts, " ")
	}
	b.Logf("remote/inproc p50 per round: %s; get-remote/get-inproc: %s; machine: %d CPUs, %s %s/%s, fsync/s of the store's directory per round: %s",
		ratios("remote", "inproc"), ratios("get-remote", "get-inproc"), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, strings.Trim(fmt.Sprintf("%.0f", fsyncs), "[]"))

	report := func(name, unit string) {
		s := samples[name]
		b.ReportMetric(ms(percentile(s.total, 50)), unit+"-p50-ms")
		b.ReportMetric(ms(percentile(s.total, 99)), unit+"-p99-ms")
	}
	report("remote", "remote")
	report("inproc", "inproc")
	report("get-remote", "get-remote")
	report("get-inproc", "get-inproc")
	b.ReportMetric(float64(percentile(samples["remote"].total, 50))/float64(percentile(samples["inproc"].total, 50)), "remote/inproc-p50")
	b.ReportMetric(float64(percentile(samples["get-remote"].total, 50))/float64(percentile(samples["get-inproc"].total, 50)), "get-remote/inproc-p50")
	b.ReportMetric(ms(percentile(samples["remote"].host, 50)), "remote-host-p50-ms")
	b.ReportMetric(median(fsyncs), "fsync/s")
}

// rtRun delivers events one at a time, as the deliverer does for one flow.
type rtRun struct {
	b    *testing.B
	eng  *engine.Engine
	h    *benchHost
	conn pluginclient.Plugin
}

// round delivers n timed events (and the untimed repeats) of variant v to
// a fresh flow, and checks what the host did.
func (r *rtRun) round(v rtVariant, n int) rtTimes {
	b := r.b
	f, err := r.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "bench", ControllerID: rtController, Goal: "round trip " + v.name})
	if err != nil {
		b.Fatal(err)
	}
	var data []byte
	if v.get {
		data = []byte(rtGetFlow)
	}
	// deliver returns when the call started and ended, in ns since r.h.base.
	deliver := func(seq int64) (start, end int64, err error) {
		ev := sdk.Event{FlowID: f.ID, Seq: seq, Type: sdk.EventTaskMilestone, Data: data, CreatedAt: time.Now()}
		ctx, cancel := context.WithTimeout(context.Background(), rtTimeout)
		defer cancel()
		start = r.h.since()
		if v.remote {
			err = r.conn.HandleEvent(ctx, ev)
		} else {
			err = benchController{}.HandleEvent(ctx, r.h, ev)
		}
		return start, r.h.since(), err
	}
	gets0, created0, existing0 := r.h.gets.Load(), r.h.created.Load(), r.h.existing.Load()
	// The first create moves the flow from queued to running: untimed.
	var seq int64 = 1
	if _, _, err := deliver(seq); err != nil {
		b.Fatalf("%s: event %d: %v", v.name, seq, err)
	}
	var res rtTimes
	repeats := 0
	for i := 1; i <= n; i++ {
		seq++
		start, end, err := deliver(seq)
		if err != nil {
			b.Fatalf("%s: event %d: %v", v.name, seq, err)
		}
		in, out := r.h.in.Load(), r.h.out.Load()
		if in < start || out < in || end < out {
			b.Fatalf("%s: event %d: the host was not called back during the call", v.name, seq)
		}
		res.total = append(res.total, time.Duration(end-start))
		res.to = append(res.to, time.Duration(in-start))
		res.host = append(res.host, time.Duration(out-in))
		res.back = append(res.back, time.Duration(end-out))
		if i%rtRedeliverEvery == 0 { // at least once: the same event again
			if _, _, err := deliver(seq); err != nil {
				b.Fatalf("%s: event %d again: %v", v.name, seq, err)
			}
			repeats++
		}
	}

	sent := int64(n + 1 + repeats)
	gets, created, existing := r.h.gets.Load()-gets0, r.h.created.Load()-created0, r.h.existing.Load()-existing0
	tasks, err := r.eng.FlowTasks(f.ID)
	if err != nil {
		b.Fatal(err)
	}
	keys := map[string]bool{}
	for _, t := range tasks {
		keys[t.IdempotencyKey] = true
	}
	if v.get {
		if gets != sent || created != 0 || existing != 0 || len(tasks) != 0 {
			b.Fatalf("%s: %d events sent; the host counted %d GetFlow, %d created, %d repeated creates, and the flow has %d tasks; want %d, 0, 0, 0",
				v.name, sent, gets, created, existing, len(tasks), sent)
		}
		return res
	}
	distinct := int64(n + 1)
	if gets != 0 || created != distinct || existing != int64(repeats) || int64(len(tasks)) != distinct || int64(len(keys)) != distinct {
		b.Fatalf("%s: %d events sent, %d distinct keys; the host counted %d GetFlow, %d created, %d repeated creates, and the flow has %d tasks with %d keys; want 0, %d, %d, %d, %d",
			v.name, sent, distinct, gets, created, existing, len(tasks), len(keys), distinct, repeats, distinct, distinct)
	}
	for s := int64(1); s <= distinct; s++ {
		if !keys[rtKey(f.ID, s)] {
			b.Fatalf("%s: no task has the key %s", v.name, rtKey(f.ID, s))
		}
	}
	return res
}

// startBenchPlugin starts the test binary as the "bench" controller plugin
// with go-plugin, configured as pluginhost.Supervisor launches one, connects
// it with pluginclient.Connect serving h, and checks its Info. It returns the
// plugin, its pid, and a function that shuts it down and kills it.
func startBenchPlugin(b *testing.B, h sdk.Host) (pluginclient.Plugin, int, func()) {
	log := hclog.New(&hclog.LoggerOptions{Name: "plugin." + rtController, Level: hclog.Warn, Output: os.Stderr})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), testPluginEnv+"=bench", sdk.LogLevelEnv+"=info", "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginclient.Handshake(),
		Plugins:          pluginclient.PluginSet(),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           log,
		StartTimeout:     10 * time.Second,
		SkipHostEnv:      true,
	})
	fail := func(format string, args ...any) {
		client.Kill()
		b.Fatalf(format, args...)
	}
	rpc, err := client.Client()
	if err != nil {
		fail("start the bench plugin: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pluginclient.Connect(ctx, rpc, h)
	if err != nil {
		fail("connect the bench plugin: %v", err)
	}
	info, err := conn.Info(ctx)
	if err != nil || info.Name != rtController || info.APIVersion != sdk.APIVersion {
		fail("bench plugin info: %+v, %v", info, err)
	}
	pid := 0
	if rc := client.ReattachConfig(); rc != nil {
		pid = rc.Pid
	}
	if pid <= 1 {
		fail("bench plugin: no pid")
	}
	return conn, pid, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := conn.Shutdown(ctx); err != nil && !errors.Is(err, sdk.ErrPluginShutdown) {
			b.Errorf("bench plugin shutdown: %v", err)
		}
		client.Kill()
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// selfCPU is the user+system time of this process.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the user+system time of process pid, from /proc (10 ms
// resolution), or 0 if it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses: state is
	// field 3, utime 14 and stime 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+stime) * 10 * time.Millisecond // USER_HZ is 100
}
