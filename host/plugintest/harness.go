package plugintest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/lifecycle"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Config says which plugin to test and how long to wait for it. Zero
// fields take their defaults.
type Config struct {
	// Path is the plugin's executable; Args are passed to it and Env is
	// added to its environment, as in a gateway's plugins: entry.
	Path string
	Args []string
	Env  map[string]string
	// Timeout bounds each wait for the plugin: its start, an event
	// answered, a restart. If zero, 30s.
	Timeout time.Duration
	// MaxTasks bounds the tasks one flow may create before the harness
	// gives up on it. If zero, 20.
	MaxTasks int
	// Logger receives the embedded gateway's log, the plugin's included.
	// If nil, it is discarded.
	Logger hclog.Logger
}

func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	if c.MaxTasks == 0 {
		c.MaxTasks = 20
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// Result is the outcome of one case.
type Result struct {
	Case string `json:"case"`
	Pass bool   `json:"pass"`
	// Detail says why the case passed or failed.
	Detail string `json:"detail"`
	// Did lists what the plugin did in the case, in order: the events it
	// answered and the writes it made.
	Did []string `json:"did,omitempty"`
}

// Report is the outcome of a run.
type Report struct {
	Plugin  string   `json:"plugin"`
	Version string   `json:"version,omitempty"`
	Cases   []Result `json:"cases"`
}

// Passed reports whether every case passed.
func (r Report) Passed() bool {
	for _, c := range r.Cases {
		if !c.Pass {
			return false
		}
	}
	return len(r.Cases) > 0
}

// harness is one run: the embedded gateway and the plugin under it.
type harness struct {
	cfg  Config
	eng  *engine.Engine
	sup  *pluginhost.Supervisor
	rec  *recorder
	name string
	// declared are the pipeline stages the plugin declares in its Info.
	declared []sdk.Stage
	// tasks is how many tasks a flow took in events-in-order, the count
	// the later cases compare with.
	tasks int
	// watches is the plugin's Info.Watch.
	watches bool
}

// Run tests the plugin cfg names and reports every case. The error is the
// harness's own (no temporary directory, no store); the plugin's failures
// are in the report.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg = cfg.withDefaults()
	dir, err := os.MkdirTemp("", "flowgate-plugins-test-")
	if err != nil {
		return Report{}, fmt.Errorf("make a temporary directory for the test gateway's store (set TMPDIR to a writable directory): %w", err)
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{})
	if err != nil {
		return Report{}, fmt.Errorf("open the test gateway's store in %s: %w", dir, err)
	}
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		return Report{}, err
	}
	h := &harness{cfg: cfg, eng: eng, rec: newRecorder(eng)}
	rep := Report{Plugin: cfg.Path}

	start := h.start(ctx)
	rep.Cases = append(rep.Cases, start.Result)
	if !start.Pass {
		for _, c := range flowCases {
			rep.Cases = append(rep.Cases, Result{Case: c.name, Detail: "not run: the plugin did not start"})
		}
		return rep, nil
	}
	rep.Plugin, rep.Version = start.info.Name, start.info.Version
	h.name, h.watches, h.declared = start.info.Name, start.info.Watch, start.info.Stages

	stop, err := h.startGateway(ctx)
	if err != nil {
		for _, c := range flowCases {
			rep.Cases = append(rep.Cases, Result{Case: c.name, Detail: "not run: " + err.Error()})
		}
		return rep, nil
	}
	defer stop()
	for _, c := range flowCases {
		rep.Cases = append(rep.Cases, c.run(h, ctx))
	}
	return rep, nil
}

// startGateway starts the supervisor (running the plugin under its own
// name, its Host recorded) and event delivery, quick to retry.
func (h *harness) startGateway(ctx context.Context) (stop func(), err error) {
	sup, err := pluginhost.NewSupervisor(h.eng, pluginhost.SupervisorConfig{
		Plugins:      []pluginhost.Spec{{Name: h.name, Path: h.cfg.Path, Args: h.cfg.Args, Env: h.cfg.Env}},
		Logger:       h.cfg.Logger,
		StartTimeout: h.cfg.Timeout,
		Backoff:      100 * time.Millisecond,
		MaxBackoff:   time.Second,
		WrapHost:     func(_ string, host sdk.Host) sdk.Host { return recordingHost{Host: host, r: h.rec} },
	})
	if err != nil {
		return nil, err
	}
	h.sup = sup
	del := pluginhost.NewDeliverer(h.eng, h.rec.handler(sup.Handler), pluginhost.DeliveryConfig{
		Timeout: h.cfg.Timeout, Backoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
		Poll: 20 * time.Millisecond, Logger: h.cfg.Logger,
	})
	group, err := lifecycle.StartAll(ctx, lifecycle.Named{Name: "plugin supervisor", Part: sup}, lifecycle.Named{Name: "event delivery", Part: del})
	if err != nil {
		return nil, fmt.Errorf("start the test gateway: %w", err)
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = group.Stop(sctx)
	}, nil
}

// newFlow makes a managed flow of the plugin.
func (h *harness) newFlow(goal string) (*sdk.Flow, error) {
	return h.eng.CreateFlow(engine.CreateFlowInput{ControllerID: h.name, OwnerKey: "plugins-test", Goal: goal, Origin: "flowgate plugins test"})
}

// settle waits until the plugin has answered every event of flowID. It
// fails when an event is parked (its deliveries kept failing) or when
// Timeout passes first, naming the event and its last error.
func (h *harness) settle(ctx context.Context, flowID string) error {
	deadline := time.Now().Add(h.cfg.Timeout)
	for {
		evs, err := h.eng.Events(flowID)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		head := evs[0]
		if head.Parked {
			return fmt.Errorf("event %d (%s) failed %d times and was parked: %s", head.Seq, head.Type, head.Deliveries, head.LastError)
		}
		if time.Now().After(deadline) {
			why := "it was not answered"
			if head.LastError != "" {
				why = fmt.Sprintf("%d deliveries failed, the last with: %s", head.Deliveries, head.LastError)
			}
			return fmt.Errorf("event %d (%s) not acknowledged within %s: %s", head.Seq, head.Type, h.cfg.Timeout, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// finishTask plays the runner: it starts task id and ends it succeeded,
// printing "ok".
func (h *harness) finishTask(id string) error {
	if _, err := h.eng.StartTask(id, engine.StartInput{}); err != nil {
		return err
	}
	zero := 0
	_, err := h.eng.FinishTask(id, engine.FinishInput{Status: sdk.TaskSucceeded, ExitCode: &zero,
		Result: &sdk.Result{Stdout: "ok\n", Summary: "ok"}})
	return err
}

// drive runs flowID to its end: it waits for the plugin to answer every
// event, finishes the tasks it queued, and again, until the flow ends. It
// fails when the plugin leaves the flow with nothing to do, or creates
// more than MaxTasks tasks.
func (h *harness) drive(ctx context.Context, flowID string) (*sdk.Flow, error) {
	for {
		if err := h.settle(ctx, flowID); err != nil {
			return nil, err
		}
		f, err := h.eng.GetFlow(flowID)
		if err != nil {
			return nil, err
		}
		if f.Status.Terminal() {
			return f, nil
		}
		tasks, err := h.eng.FlowTasks(flowID)
		if err != nil {
			return nil, err
		}
		if len(tasks) > h.cfg.MaxTasks {
			return f, fmt.Errorf("the plugin created %d tasks in one flow, more than the %d the harness allows", len(tasks), h.cfg.MaxTasks)
		}
		queued := 0
		for _, t := range tasks {
			if t.Status == sdk.TaskQueued {
				queued++
				if err := h.finishTask(t.ID); err != nil {
					return f, fmt.Errorf("finish task %s: %w", t.ID, err)
				}
			}
		}
		if queued == 0 {
			return f, fmt.Errorf("the flow is %s with no queued task and every event answered: the plugin left it with nothing to do", f.Status)
		}
	}
}

// errNoTask is the first event's outcome when the plugin created no task.
var errNoTask = errors.New("the plugin created no task for flow.started")

// firstTask waits for the plugin to answer flow.started and returns the
// task it queued.
func (h *harness) firstTask(ctx context.Context, flowID string) (*stored.Task, error) {
	if err := h.settle(ctx, flowID); err != nil {
		return nil, err
	}
	tasks, err := h.eng.FlowTasks(flowID)
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if t.Status == sdk.TaskQueued {
			return t, nil
		}
	}
	return nil, errNoTask
}
