package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/sdk"
)

// oneStep is the workflow of the controller round trip: one shell step.
const oneStep = "steps:\n  - id: step\n    run: \"true\"\n"

// controllerWarmup is how many untimed events each variant gets first.
const controllerWarmup = 10

// controller measures the controller round trip with the first-party
// pipeline controller, served by cfg.Self as "flowgate plugin serve
// pipeline" under the gateway's plugin supervisor (pluginhost.Supervisor,
// so the gateway's own host answers the callbacks), against the same
// controller (cfg.Controller) called in process over the same host
// (pluginhost.NewHost).
//
// Each timed event is the flow.started of a fresh flow of a one-step
// workflow (the flow is created untimed). The controller reads the flow,
// resumes it, lists its tasks, and records the step it stands at and
// creates the step's task in one Advance, which also acknowledges the
// event: four callbacks, two commits. The same event is then
// delivered again (timed as the read figure): the controller reads the
// flow and its tasks, finds the task active and writes nothing. Every
// flow must end running with exactly one task.
func (r *run) controller(ctx context.Context) ([]Figure, error) {
	dir := mkdir(filepath.Join(r.tmp, "ctl"))
	wf := filepath.Join(dir, "step.lobster")
	if err := os.WriteFile(wf, []byte(oneStep), 0o600); err != nil {
		return nil, err
	}
	state, err := flows.Invocation{File: wf, Cwd: dir}.State()
	if err != nil {
		return nil, err
	}
	st, eng, err := openEngine(dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	sup, err := pluginhost.NewSupervisor(eng, pluginhost.SupervisorConfig{
		Plugins: []pluginhost.Spec{{Name: flows.PipelineController}}, Self: r.cfg.Self, Logger: r.cfg.Logger.Named("bench"), LogLevel: "warn",
	})
	if err != nil {
		return nil, err
	}
	bg := context.WithoutCancel(ctx)
	if err := sup.Start(bg); err != nil {
		return nil, err
	}
	defer func() { _ = sup.Stop(bg) }()
	remote, err := waitHandler(ctx, sup, flows.PipelineController)
	if err != nil {
		return nil, err
	}
	host := pluginhost.NewHost(eng, flows.PipelineController, r.cfg.Logger.Named("bench"))
	ctl := r.cfg.Controller
	variants := []struct {
		name    string
		deliver func(context.Context, sdk.Event) error
	}{
		{"remote", remote.HandleEvent},
		{"inproc", func(ctx context.Context, ev sdk.Event) error { return ctl.HandleEvent(ctx, host, ev) }},
	}
	// calls delivers n events of one variant and returns the timings of
	// the starts and of the repeats.
	calls := func(deliver func(context.Context, sdk.Event) error, n int) (starts, repeats []time.Duration, err error) {
		for range n {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "bench", ControllerID: flows.PipelineController, Goal: "controller round trip", State: state})
			if err != nil {
				return nil, nil, err
			}
			ev := sdk.Event{FlowID: f.ID, Seq: 1, Type: sdk.EventFlowStarted, CreatedAt: f.CreatedAt}
			var revs [2]int64
			for i, into := range []*[]time.Duration{&starts, &repeats} {
				d, err := timed(ctx, deliver, ev)
				if err != nil {
					return nil, nil, err
				}
				*into = append(*into, d)
				got, err := eng.GetFlow(f.ID)
				if err != nil {
					return nil, nil, err
				}
				if got.Status != sdk.FlowRunning {
					return nil, nil, fmt.Errorf("flow %s is %s after its event; want running", f.ID, got.Status)
				}
				revs[i] = got.Revision
			}
			tasks, err := eng.FlowTasks(f.ID)
			if err != nil {
				return nil, nil, err
			}
			if len(tasks) != 1 || revs[1] != revs[0] {
				return nil, nil, fmt.Errorf("flow %s has %d tasks and went from revision %d to %d on the repeated event; want 1 task and no write", f.ID, len(tasks), revs[0], revs[1])
			}
		}
		return starts, repeats, nil
	}
	for _, v := range variants {
		if _, _, err := calls(v.deliver, controllerWarmup); err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
	}
	p50 := map[string][2][]float64{}
	for range r.sz.Rounds {
		for _, v := range variants {
			starts, repeats, err := calls(v.deliver, r.sz.ControllerCalls)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.name, err)
			}
			p := p50[v.name]
			p[0], p[1] = append(p[0], medianMs(starts)), append(p[1], medianMs(repeats))
			p50[v.name] = p
		}
	}
	fig := func(name, title string, i int, target *Target, note string) Figure {
		return Figure{Name: name, Title: title, Value: median(p50["remote"][i]), Unit: "ms", Rounds: p50["remote"][i],
			Baseline: median(p50["inproc"][i]), BaselineTitle: "same controller in process", BaselineUnit: "ms", Target: target, Note: note}
	}
	return []Figure{
		fig(FigController, "controller round trip, p50 (pipeline starts a step)", 0, &Target{Of: "ratio", Op: "<=", Limit: 2.5},
			"flowgate plugin serve pipeline; 4 callbacks and 2 commits per event"),
		fig(FigControllerRead, "controller round trip, p50 (repeated event, no write)", 1, nil,
			"2 read callbacks: mostly the transport"),
	}, nil
}

// timed delivers ev with the deliverer's default timeout and returns how
// long it took.
func timed(ctx context.Context, deliver func(context.Context, sdk.Event) error, ev sdk.Event) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, sdk.DefaultEventTimeout)
	defer cancel()
	t0 := time.Now()
	err := deliver(ctx, ev)
	return time.Since(t0), err
}

// waitHandler waits for the supervisor's instance of plugin name to run.
func waitHandler(ctx context.Context, sup *pluginhost.Supervisor, name string) (pluginhost.Handler, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, err := sup.Handler(name)
		if err == nil {
			return h, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the %s plugin did not start within 30s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
