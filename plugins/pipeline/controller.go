package pipeline

import (
	"context"
	"os"
	"path/filepath"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// Name is the controller's name: pipeline flows name it as their
// controller_id.
const Name = flows.PipelineController

// Version is the controller's version, reported by Info.
const Version = "0.1.0"

// New returns the pipeline controller with the options of its
// environment (OptionsFrom(os.Getenv)). It keeps no state between events
// but caches: everything it knows is in the flow's state and tasks, and
// in the files under its data directory which the state names.
func New() sdk.Controller { return NewFrom(os.Getenv) }

// NewFrom returns the pipeline controller with the options getenv tells
// (OptionsFrom): a gateway that runs it in its own process passes the
// environment its plugin process would have had.
func NewFrom(getenv func(string) string) sdk.Controller {
	return NewWithOptions(OptionsFrom(getenv))
}

// NewWithOptions returns the pipeline controller with opts.
func NewWithOptions(opts Options) sdk.Controller {
	if abs, err := filepath.Abs(opts.DataDir); err == nil && opts.DataDir != "" {
		opts.DataDir = abs // the output's file is named by its path, for other readers
	}
	return controller{opts: opts, workflows: &flows.Cache{}, results: &resultMemo{}, looks: &lookMemo{}}
}

// controller is the pipeline controller. workflows keeps the workflow
// files its passes loaded: every event of a flow loads its file again,
// and one unchanged since is not parsed again. results keeps the step
// results the last pass over each flow decoded from its state: those
// whose bytes are unchanged are not decoded again (see resultMemo).
// looks keeps what the plan shows of each step of a workflow run with
// some args (see lookMemo).
type controller struct {
	opts      Options
	workflows *flows.Cache
	results   *resultMemo
	looks     *lookMemo
}

// Info names the controller "pipeline".
func (controller) Info(context.Context) (sdk.Info, error) {
	// Every pass reads the flow's tasks whole, so task.finished events
	// queued together can be handled as one.
	return sdk.Info{Name: Name, Version: Version, APIVersion: sdk.APIVersion, Capabilities: []string{sdk.CapabilityFoldTaskFinished}}, nil
}

// Shutdown has nothing to release.
func (controller) Shutdown(context.Context) error { return nil }

// HandleEvent advances the flow as far as it can go: it re-derives every
// step's outcome from the flow's state and tasks, so a repeated event
// changes nothing. A flow that is waiting or blocked waits for
// flow.resumed; one with a cancel request is left to become cancelled
// when its task settles.
func (c controller) HandleEvent(ctx context.Context, host sdk.Host, ev sdk.Event) error {
	if ev.Type == sdk.EventTaskMilestone {
		return nil
	}
	f, err := host.GetFlow(ctx, ev.FlowID)
	if err != nil {
		return err
	}
	switch {
	case f.Status.Terminal(), f.CancelRequested(), f.Status == sdk.FlowWaiting, f.Status == sdk.FlowBlocked:
		return nil
	case f.Status == sdk.FlowQueued:
		if f, err = host.Resume(ctx, f.ID, f.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning}); err != nil {
			return err
		}
	}
	r := &run{host: host, flow: f, ack: ev.Seq, opts: c.opts, workflows: c.workflows, results: c.results, looks: c.looks, files: files{dir: c.opts.DataDir, flow: f.ID, from: f.SourceFlowID}}
	if c.opts.SharedStore {
		r.files.store = &hostValues{ctx: ctx, host: host}
	}
	return r.advance(ctx)
}
