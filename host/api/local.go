package api

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Local is a Client over a store opened in this process, for when no
// gateway runs. It holds the store's file lock until Close.
type Local struct {
	st    store.Store
	eng   *engine.Engine
	sched *scheduler.Scheduler
	home  string
	// space measures the store file for maintenance; nil when the store
	// is not one file this process can measure.
	space func() (store.Space, error)
	// changes and backstop pace FollowHistory (see WakeOn); nil changes
	// means a read every historyPoll.
	changes  Changes
	backstop time.Duration
}

// engine is l's engine bound to the request's ctx: every store call a
// method makes is bounded by its caller's context. Each method reaches
// the engine through it, so none can forget the binding.
func (l *Local) engine(ctx context.Context) *engine.Engine { return l.eng.WithContext(ctx) }

// OpenLocal opens the store in home dir (creating dir with mode 0700) and
// returns a Local client. owner describes this process to anyone who finds
// the store locked, e.g. "flowgate tasks list".
func OpenLocal(dir, owner string) (*Local, error) {
	if err := home.Ensure(dir); err != nil {
		return nil, err
	}
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{Owner: owner})
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		st.Close()
		return nil, err
	}
	// With no gateway running, bring the records up to date first: tasks
	// that ended since the last gateway stopped are settled, so what this
	// command shows is current. A failure here leaves the records as they
	// were, which is still a consistent (if stale) view.
	_ = runner.Reconcile(context.Background(), eng, dir)
	return NewLocal(st, eng, dir, nil), nil
}

// NewLocal returns a Local client over an engine the caller owns, for home
// dir; Close then closes st. sched serves the cron calls: a gateway passes
// its running Scheduler, so that RunJobNow and BackfillJob take turns
// with its loop. If sched is nil, one over eng is made and never
// started (the calls record runs; nothing fires on a schedule); it checks
// the destinations jobs name as written, with no named ones.
func NewLocal(st store.Store, eng *engine.Engine, dir string, sched *scheduler.Scheduler) *Local {
	if sched == nil {
		book, _ := dest.NewBook(dest.Config{}) // no names: nothing to refuse
		sched = scheduler.New(eng, scheduler.Config{Dests: dest.CronDests{Book: book}})
	}
	l := &Local{st: st, eng: eng, sched: sched, home: dir}
	if b, ok := st.(*store.Bolt); ok {
		l.space = b.Space
	}
	return l
}

// UseBook makes the cron calls check the destinations a job names
// against b: a command with its own store passes the book of its home's
// gateway config, so that a name from its notify: map is known as the
// gateway would know it. It serves a Local from OpenLocal or
// OpenLocalAt, whose scheduler fires nothing; call it before any cron
// call.
func (l *Local) UseBook(b *dest.Book) {
	l.sched = scheduler.New(l.eng, scheduler.Config{Dests: dest.CronDests{Book: b}})
}

// Engine returns the engine behind the client.
func (l *Local) Engine() *engine.Engine { return l.eng }

// ListTasks lists tasks, newest first.
func (l *Local) ListTasks(ctx context.Context, f apitype.TaskFilter) (apitype.TaskPage, error) {
	p, err := l.engine(ctx).ListTasks(engine.TaskFilter(f))
	return taskPageOf(p), err
}

// ResolveTask finds a task by id or idempotency key.
func (l *Local) ResolveTask(ctx context.Context, token string) (*stored.Task, error) {
	return l.engine(ctx).ResolveTask(token)
}

// CancelTask cancels a task.
func (l *Local) CancelTask(ctx context.Context, id string) (*stored.Task, error) {
	return l.engine(ctx).CancelTask(id)
}

// ViewFlows lists flows with their tasks, newest first.
func (l *Local) ViewFlows(ctx context.Context, f apitype.FlowFilter) (apitype.FlowViewPage, error) {
	p, err := l.engine(ctx).ViewFlows(engine.FlowFilter(f))
	return flowViewPageOf(p), err
}

// CountFlows counts flows by status.
func (l *Local) CountFlows(ctx context.Context) (apitype.FlowCounts, error) {
	c, err := l.engine(ctx).CountFlows()
	return apitype.FlowCounts(c), err
}

// FlowRevision returns the revision of the flow of id or owner key
// token, read without its record's decoding or its tasks.
func (l *Local) FlowRevision(ctx context.Context, token string) (int64, error) {
	return l.engine(ctx).FlowRevision(token)
}

// ViewFlow finds a flow by id or owner key, with its tasks.
func (l *Local) ViewFlow(ctx context.Context, token string) (apitype.FlowView, error) {
	v, err := l.engine(ctx).ViewFlow(token)
	return flowViewOf(v), err
}

// CreateFlow creates a managed flow.
func (l *Local) CreateFlow(ctx context.Context, in apitype.CreateFlowInput) (*sdk.Flow, error) {
	return l.engine(ctx).CreateFlow(engine.CreateFlowInput(in))
}

// UpdateFlow applies a guarded patch.
func (l *Local) UpdateFlow(ctx context.Context, id string, expected int64, p apitype.FlowPatch) (*sdk.Flow, error) {
	return l.engine(ctx).UpdateFlow(id, expected, engine.FlowPatch(p))
}

// CancelFlow cancels a flow on behalf of by.
func (l *Local) CancelFlow(ctx context.Context, id, by string) (apitype.CancelResult, error) {
	r, err := l.engine(ctx).CancelFlow(id, by)
	return apitype.CancelResult(r), err
}

// RunTask records a queued task with a command for the runner. It refuses
// a task with nothing to run, and one with held env values (only a
// gateway's runner can hold them).
func (l *Local) RunTask(ctx context.Context, in apitype.CreateTaskInput) (*stored.Task, bool, error) {
	if len(in.Spec.Argv) == 0 && in.Spec.Shell == "" {
		return nil, false, fmt.Errorf("%w: a task to run needs a command (argv or shell)", sdk.ErrInvalid)
	}
	if len(in.HeldEnv) > 0 {
		return nil, false, fmt.Errorf("%w: secret and inherited env values are held in a running gateway's memory, and none serves this client; run the task with flowgate tasks run, which starts one", sdk.ErrInvalid)
	}
	in.Status = sdk.TaskQueued
	return l.engine(ctx).CreateTask(engine.CreateTaskInput(in))
}

// Status reports that no gateway serves this client, with record counts.
func (l *Local) Status(ctx context.Context) (apitype.GatewayStatus, error) {
	tasks, err := l.engine(ctx).CountTasks()
	if err != nil {
		return apitype.GatewayStatus{}, err
	}
	flows, err := l.engine(ctx).CountFlows()
	if err != nil {
		return apitype.GatewayStatus{}, err
	}
	return apitype.GatewayStatus{Home: l.home, Tasks: tasks, Flows: flows.ByStatus}, nil
}

// Plugins reports that no gateway runs, so no plugin does.
func (l *Local) Plugins(context.Context) ([]apitype.PluginStatus, error) {
	return nil, fmt.Errorf("%w: plugins run inside the gateway; start one with flowgate gateway", ErrNoGateway)
}

// Close closes the store.
func (l *Local) Close() error { return l.st.Close() }
