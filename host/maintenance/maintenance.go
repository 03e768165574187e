// Package maintenance keeps a flowgate home tidy: it settles tasks whose
// process is gone, stamps and enforces retention, finishes cancels that
// missed their end, prunes terminal flows past retention, and repairs what
// an audit can prove wrong (mirrored flows out of step with their task,
// index entries out of step with their records).
//
// Run plans and, with Apply, acts, in one pass over the tasks and one over
// the flows (time linear in the records), tasks first: settling a task can
// end a flow, which the flow pass then sees. Every action goes through an
// engine primitive that re-reads its record and refuses one that no longer
// qualifies, so a pass planned from a listing can never prune a flow that
// moved meanwhile; such a refusal is counted as skipped, not as an error.
//
// The rules, in order, per task:
//
//   - Reconcile: a running task with a command whose attempt's shim is
//     gone without recording how it ended (runner.AttemptGone), and that
//     has not changed for Grace, is lost (or queued again when its retry
//     policy marks it safe to repeat).
//   - Repair: inconsistent timestamps (the audit's inconsistent_timestamps)
//     are put in order by engine.RepairedTaskTimes, guarded by the task's
//     updated_at as read; this comes first, so the rules below see them.
//   - Stamp: a terminal task without cleanup_after gets one.
//   - Prune: a terminal task whose flow is gone is deleted, with its logs,
//     once its cleanup_after has passed. (A task with a flow goes with its
//     flow.)
//
// and per flow:
//
//   - Repair: inconsistent timestamps, by engine.RepairedFlowTimes,
//     guarded by the flow's revision as read.
//   - Reconcile: a managed flow with a cancel request, not terminal, with
//     no active task, becomes cancelled; a mirrored flow out of step with
//     its task is re-derived from it.
//   - Prune: a terminal flow that ended FlowRetention ago or more, with no
//     active task, is deleted with its tasks, their logs and its events. A
//     flow that can still move (waiting at a gate, blocked, running) is
//     never pruned.
//
// The listings skip damaged records (engine.DamagedRecord: a record that
// does not decode, or one the engine could not have written, such as a
// flow with status "done"), and no rule acts on one: with Apply, a full
// pass moves each to the quarantine (engine.Quarantine) as its listing
// meets it, tasks first, where flowgate check lists it and backups keep
// it. Then the indexes: every entry is checked against its record and,
// with Apply, repaired; the entries of a quarantined record go with it.
//
// A Quick pass, the gateway's periodic sweep, reads only what can need
// action in normal operation, through the indexes: running tasks, flows
// that have not ended, and flows that ended before the retention cutoff.
// Its cost follows the live and expiring work, not the size of the store.
// It leaves to a full pass (flowgate tasks maintenance) what only damage
// produces: unstamped and dangling tasks, and index mismatches.
package maintenance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Defaults for Config.
const (
	DefaultGrace         = 5 * time.Minute
	DefaultFlowRetention = 7 * 24 * time.Hour
	pageSize             = 500
)

// Config tunes a pass. The zero value is ready to use.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Home is the flowgate home, for task logs and attempt files. Empty
	// skips the reconcile rule and log removal.
	Home string
	// Grace is how long a task whose process is gone stays running before
	// it is marked lost. Zero means DefaultGrace.
	Grace time.Duration
	// Mine says whether the gateway that started a running task (its
	// member id, stored.Task.Gateway) kept the task's files in Home: the
	// reconcile rule judges only those, since another gateway's task
	// has no files here although it runs. If nil, every task's files are
	// in Home (one gateway).
	Mine func(gateway string) bool
	// FlowRetention is how long a terminal flow is kept after it ended.
	// Zero means DefaultFlowRetention.
	FlowRetention time.Duration
	// Apply writes the changes; without it Run only counts them.
	Apply bool
	// Quick reads only the records that normal operation can leave in
	// need of action (see the package doc).
	Quick bool
	// Space reports how the store file's bytes are used; nil skips the
	// compaction rule. A full pass finds compaction due when more than
	// CompactShare of the file (zero: DefaultCompactShare) is free pages,
	// and at least CompactMinBytes (zero: DefaultCompactMinBytes). bbolt
	// cannot compact a file it has open, so applying writes the marker
	// CompactMarker in Home, and the next process to open the store
	// exclusively (the gateway at its start, or tasks maintenance with no
	// gateway) compacts it.
	Space           func() (store.Space, error)
	CompactShare    float64
	CompactMinBytes int64
}

// Compaction defaults, and the marker file that asks for one.
const (
	DefaultCompactShare    = 0.5
	DefaultCompactMinBytes = 16 << 20
	CompactMarker          = "compact.pending"
)

// Compaction is what a pass found of the store file's free space.
type Compaction struct {
	store.Space
	// Due is set when the free pages pass both thresholds.
	Due bool `json:"due"`
	// Requested is set when an applying pass wrote the marker.
	Requested bool `json:"requested,omitempty"`
}

// TaskCounts counts the task rules that matched.
type TaskCounts struct {
	Reconciled     int `json:"reconciled"`
	CleanupStamped int `json:"cleanup_stamped"`
	// Pruned counts every task deleted: on its own (its flow is gone) or
	// together with its flow.
	Pruned int `json:"pruned"`
	// TimestampsRepaired counts tasks whose inconsistent timestamps were
	// put in order (engine.RepairedTaskTimes).
	TimestampsRepaired int `json:"timestamps_repaired"`
}

// FlowCounts counts the flow rules that matched.
type FlowCounts struct {
	Reconciled         int `json:"reconciled"`
	Pruned             int `json:"pruned"`
	TimestampsRepaired int `json:"timestamps_repaired"`
}

// Summary is what a pass found and, with Apply, did.
type Summary struct {
	// Mode is "preview" or "apply".
	Mode      string     `json:"mode"`
	Tasks     TaskCounts `json:"tasks"`
	TaskFlows FlowCounts `json:"task_flows"`
	// Quarantined counts damaged records (engine.DamagedRecord) moved, or
	// to move, to the quarantine (full passes only).
	Quarantined int `json:"quarantined"`
	// Indexes counts index entries out of step with their records.
	Indexes int `json:"indexes"`
	// LogsRemoved counts task log directories removed with their tasks.
	LogsRemoved int `json:"logs_removed"`
	// Skipped counts records that no longer qualified when acted on.
	Skipped int `json:"skipped"`
	// Compaction is the store file's free space (full passes with Space
	// only).
	Compaction *Compaction `json:"compaction,omitempty"`
	// Errors lists what failed, one line per record; a failure on one
	// record never stops the pass.
	Errors []string `json:"errors,omitempty"`
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.FlowRetention <= 0 {
		c.FlowRetention = DefaultFlowRetention
	}
	if c.CompactShare <= 0 {
		c.CompactShare = DefaultCompactShare
	}
	if c.CompactMinBytes <= 0 {
		c.CompactMinBytes = DefaultCompactMinBytes
	}
	return c
}

// Run makes one maintenance pass over eng's records (see the package doc)
// and returns its summary. It stops early only when ctx ends or a listing
// fails.
func Run(ctx context.Context, eng *engine.Engine, cfg Config) (Summary, error) {
	cfg = cfg.withDefaults()
	p := &pass{eng: eng, cfg: cfg, now: cfg.Now(), sum: Summary{Mode: "preview"}}
	if cfg.Apply {
		p.sum.Mode = "apply"
	}
	if err := p.tasks(ctx); err != nil {
		return p.sum, err
	}
	if err := p.flows(ctx); err != nil {
		return p.sum, err
	}
	if cfg.Quick {
		return p.sum, nil
	}
	problems, err := eng.CheckIndexes()
	if err != nil {
		return p.sum, err
	}
	for _, ip := range problems {
		if ip.Kind != engine.RecordDamaged {
			p.sum.Indexes++
		}
	}
	if cfg.Apply && p.sum.Indexes > 0 {
		if _, err := eng.RepairIndexes(); err != nil {
			p.fail("repair indexes", err)
		}
	}
	p.compaction()
	return p.sum, nil
}

// quarantine moves the damaged records a full pass's listing skipped to
// the quarantine (engine.Quarantine). A quick pass leaves them to a full
// one.
func (p *pass) quarantine(records []engine.DamagedRecord) {
	if p.cfg.Quick {
		return
	}
	for _, d := range records {
		if p.act("quarantine "+d.Key, func() error { _, err := p.eng.Quarantine(d.Key); return err }) {
			p.sum.Quarantined++
		}
	}
}

type pass struct {
	eng *engine.Engine
	cfg Config
	now time.Time
	sum Summary
}

// act runs fn when applying and counts a refusal as skipped. It reports
// whether the rule counts: always in preview, on success when applying.
func (p *pass) act(what string, fn func() error) bool {
	if !p.cfg.Apply {
		return true
	}
	err := fn()
	switch {
	case err == nil:
		return true
	case errors.Is(err, sdk.ErrInvalid), errors.Is(err, sdk.ErrNotFound), errors.Is(err, sdk.ErrTerminal), errors.Is(err, sdk.ErrRevisionConflict):
		p.sum.Skipped++
	default:
		p.fail(what, err)
	}
	return false
}

func (p *pass) fail(what string, err error) {
	p.sum.Errors = append(p.sum.Errors, fmt.Sprintf("%s: %v", what, err))
}

func (p *pass) tasks(ctx context.Context) error {
	f := engine.TaskFilter{Limit: pageSize}
	if p.cfg.Quick {
		f.Status = sdk.TaskRunning
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		page, err := p.eng.ListTasks(f)
		if err != nil {
			return fmt.Errorf("list tasks: %w", err)
		}
		p.quarantine(page.Damaged)
		for _, t := range page.Tasks {
			p.task(t)
		}
		if page.Next == "" {
			return nil
		}
		f.After = page.Next
	}
}

func (p *pass) task(t *stored.Task) {
	p.taskTimestamps(t)
	switch {
	case t.Status == sdk.TaskRunning:
		if p.cfg.Home == "" || !engine.Runnable(t) || p.now.Sub(t.UpdatedAt) < p.cfg.Grace {
			return
		}
		if p.cfg.Mine != nil && !p.cfg.Mine(t.Gateway) {
			return
		}
		switch runner.AttemptState(p.cfg.Home, t) {
		case runner.AttemptGone:
			why := fmt.Sprintf("its shim is gone and nothing changed for %s (found by maintenance)", p.cfg.Grace)
			if p.act("mark task "+t.ID+" lost", func() error { return runner.MarkLost(p.eng, p.cfg.Home, t, why) }) {
				p.sum.Tasks.Reconciled++
			}
		case runner.AttemptUnclaimed:
			why := fmt.Sprintf("no shim took it in %s (found by maintenance)", p.cfg.Grace)
			if p.act("queue task "+t.ID+" again", func() error { return runner.RequeueUnclaimed(p.eng, p.cfg.Home, t, why) }) {
				p.sum.Tasks.Reconciled++
			}
		}
	case !t.Status.Terminal():
	case t.CleanupAfter.IsZero():
		if p.act("stamp task "+t.ID, func() error { _, err := p.eng.StampCleanup(t.ID); return err }) {
			p.sum.Tasks.CleanupStamped++
		}
	case !t.CleanupAfter.After(p.now):
		if _, err := p.eng.GetFlow(t.FlowID); !errors.Is(err, sdk.ErrNotFound) {
			return // pruned with its flow
		}
		if p.act("prune task "+t.ID, func() error { return p.eng.PruneTask(t.ID, p.now) }) {
			p.sum.Tasks.Pruned++
			p.removeLogs(t.ID)
		}
	}
}

func (p *pass) flows(ctx context.Context) error {
	if !p.cfg.Quick {
		return p.flowPages(ctx, engine.FlowFilter{Limit: pageSize})
	}
	for _, s := range sdk.FlowStatuses() {
		if !s.Terminal() {
			if err := p.flowPages(ctx, engine.FlowFilter{Status: s, Limit: pageSize}); err != nil {
				return err
			}
		}
	}
	ids, err := p.eng.FlowsEndedBefore(p.now.Add(-p.cfg.FlowRetention), 0)
	if err != nil {
		return fmt.Errorf("list ended flows: %w", err)
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := p.eng.GetFlow(id)
		if errors.Is(err, sdk.ErrNotFound) {
			continue
		}
		if err != nil {
			p.fail("flow "+id, err)
			continue
		}
		p.flow(f)
	}
	return nil
}

// flowPages runs the flow rules over every page of flows matching f.
func (p *pass) flowPages(ctx context.Context, f engine.FlowFilter) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		page, err := p.eng.ListFlows(f)
		if err != nil {
			return fmt.Errorf("list flows: %w", err)
		}
		p.quarantine(page.Damaged)
		for _, fl := range page.Flows {
			p.flow(fl)
		}
		if page.Next == "" {
			return nil
		}
		f.After = page.Next
	}
}

func (p *pass) flow(f *sdk.Flow) {
	p.flowTimestamps(f)
	cancel := f.SyncMode == sdk.SyncManaged && f.CancelRequested() && !f.Status.Terminal()
	mirrored := f.SyncMode == sdk.SyncTaskMirrored
	expired := f.Status.Terminal() && !f.EndedAt.IsZero() && p.now.Sub(f.EndedAt) >= p.cfg.FlowRetention
	// The flow's tasks, read once for the rules that judge by them.
	// Applying, PruneFlow reads them itself.
	var tasks []*stored.Task
	if cancel || mirrored || (expired && !p.cfg.Apply) {
		var (
			err     error
			damaged *engine.DamagedRecord
		)
		switch tasks, err = p.eng.FlowTasks(f.ID); {
		case errors.As(err, &damaged):
			return // a task of it is damaged: counted as such, and quarantined when applying
		case err != nil:
			p.fail("flow "+f.ID, err)
			return
		}
	}
	switch {
	case cancel:
		if !anyActive(tasks) && p.act("finish the cancel of flow "+f.ID, func() error { _, err := p.eng.FinalizeCancel(f.ID); return err }) {
			p.sum.TaskFlows.Reconciled++
		}
	case mirrored && len(tasks) > 0 && engine.MirrorMismatch(f, tasks[len(tasks)-1]):
		if p.act("repair mirrored flow "+f.ID, func() error { _, err := p.eng.RepairMirror(f.ID); return err }) {
			p.sum.TaskFlows.Reconciled++
		}
	case !expired:
	case !p.cfg.Apply:
		if !anyActive(tasks) {
			p.sum.TaskFlows.Pruned++
			p.sum.Tasks.Pruned += len(tasks)
		}
	default:
		var pruned []string
		prune := func() (err error) { pruned, err = p.eng.PruneFlow(f.ID, p.now.Add(-p.cfg.FlowRetention)); return err }
		done := p.act("prune flow "+f.ID, prune)
		// A prune in steps that failed part way deleted these tasks too.
		p.sum.Tasks.Pruned += len(pruned)
		for _, id := range pruned {
			p.removeLogs(id)
		}
		if done {
			p.sum.TaskFlows.Pruned++
			p.removeData(f.ID)
		}
	}
}

// removeLogs deletes a pruned task's log directory.
func (p *pass) removeLogs(taskID string) {
	if p.cfg.Home == "" || !p.cfg.Apply {
		return
	}
	dir := runner.TaskDir(p.cfg.Home, taskID)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		p.fail("remove logs of task "+taskID, err)
		return
	}
	p.sum.LogsRemoved++
}

// removeData deletes the directory controllers kept a pruned flow's
// large values in (sdk.DataDirEnv), if there is one.
func (p *pass) removeData(flowID string) {
	if p.cfg.Home == "" || !p.cfg.Apply {
		return
	}
	if err := os.RemoveAll(filepath.Join(p.cfg.Home, home.DataDir, flowID)); err != nil {
		p.fail("remove the data of flow "+flowID, err)
	}
}

func anyActive(tasks []*stored.Task) bool {
	for _, t := range tasks {
		if t.Status.Active() {
			return true
		}
	}
	return false
}
