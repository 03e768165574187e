package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/lifecycle"
	"github.com/flowgate/flowgate/host/throttle"
	"github.com/flowgate/flowgate/sdk"
)

// ErrUnavailable means a controller is starting or restarting: delivery
// waits for it without counting a failure.
var ErrUnavailable = errors.New("controller unavailable")

// Handler delivers one event to a live controller instance.
type Handler interface {
	HandleEvent(ctx context.Context, ev sdk.Event) error
}

// folder is a Handler whose controller declared
// sdk.CapabilityFoldTaskFinished: task.finished events queued back to
// back are handed to it as one (engine.FoldTaskFinished).
type folder interface {
	foldsTaskFinished() bool
}

// DeliveryConfig tunes event delivery. Zero fields take their defaults.
type DeliveryConfig struct {
	// Timeout bounds one HandleEvent call. If zero, sdk.DefaultEventTimeout.
	Timeout time.Duration
	// MaxFailures is how many failed deliveries of one event block its
	// flow. If zero, 5.
	MaxFailures int
	// Backoff is the delay after the first failure, doubled after each
	// next one up to MaxBackoff. If zero, 1s and 1m.
	Backoff, MaxBackoff time.Duration
	// Poll is how often the outbox is scanned when nothing wakes the
	// deliverer. If zero, 250ms.
	Poll time.Duration
	// Concurrency caps deliveries in flight (one per flow). If zero, 16.
	Concurrency int
	// Logger receives delivery logs; nil discards them. Lines about the
	// store are kept to one per message per throttle.DefaultEvery.
	Logger hclog.Logger
	// Observer hears how deliveries end (metrics). If nil, nothing does.
	Observer DeliveryObserver
	// Member is this gateway's member id when several gateways share the
	// store (etcd). The deliverer then delivers only the flows whose
	// event stream it holds or claims (engine.ClaimStreams): a stream no
	// one holds, or one whose holder Live says is gone. It claims no
	// more new streams at a pass than it has deliveries free, and
	// releases every stream it holds when it stops. If empty, the
	// gateway is the store's only one and delivers every flow.
	Member string
	// Live says whether a member is still a member of the installation;
	// required with Member.
	Live func(member string) bool
}

func (c DeliveryConfig) withDefaults() DeliveryConfig {
	if c.Observer == nil {
		c.Observer = noDeliveryObserver{}
	}
	if c.Timeout == 0 {
		c.Timeout = sdk.DefaultEventTimeout
	}
	if c.MaxFailures == 0 {
		c.MaxFailures = 5
	}
	if c.Backoff == 0 {
		c.Backoff = time.Second
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = time.Minute
	}
	if c.Poll == 0 {
		c.Poll = 250 * time.Millisecond
	}
	if c.Concurrency == 0 {
		c.Concurrency = 16
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// Deliverer moves events from the outbox to controllers: in order per
// flow, one at a time per flow, at least once. An event is removed only
// when its controller acknowledged it (HandleEvent returned nil). A failed
// delivery is retried with backoff; after MaxFailures the event is parked
// and its flow blocked with a summary that names the controller and its
// error, so nothing is dropped in silence. Before each read of the outbox
// it fires the wakes that came due (engine.FireWakes), so a controller's
// wake is delivered like any other event.
//
// When the store cannot record an outcome (a full disk), every delivery
// holds back (see package throttle): the event stays in the outbox, and
// the first delivery after the hold finds out whether writes work again.
type Deliverer struct {
	eng    *engine.Engine
	lookup func(controller string) (Handler, error)
	cfg    DeliveryConfig
	log    hclog.Logger
	wake   chan struct{}
	// hold backs every delivery off while the store fails to write;
	// storeLog throttles the lines about it.
	hold     throttle.Backoff
	storeLog *throttle.Log

	life     lifecycle.Service
	mu       sync.Mutex
	inflight map[string]bool // flow ids
	// acked holds, for flows in flight, the event their controller
	// acknowledged in the transaction of what it did for it (Acked).
	acked map[string]int64
	// indexed is set once the delivery queue matches the outbox
	// (engine.IndexOutbox), which the first pass makes sure of.
	indexed bool
}

// NewDeliverer returns a deliverer that finds the live instance of a
// controller with lookup; lookup returns an error when none runs.
func NewDeliverer(eng *engine.Engine, lookup func(controller string) (Handler, error), cfg DeliveryConfig) *Deliverer {
	cfg = cfg.withDefaults()
	d := &Deliverer{eng: eng, lookup: lookup, cfg: cfg, log: cfg.Logger, wake: make(chan struct{}, 1), inflight: map[string]bool{}, acked: map[string]int64{},
		storeLog: &throttle.Log{Logger: cfg.Logger}}
	d.life.Name = "event delivery"
	return d
}

// Changed tells the deliverer about a committed change (it is an
// engine.Listener): a queued event wakes it (Wake), an event acknowledged
// with its controller's write is noted (Acked). It never blocks on I/O.
func (d *Deliverer) Changed(c engine.Change) {
	switch c.Kind {
	case engine.EventQueued:
		d.Wake()
	case engine.EventAcked:
		d.Acked(c.FlowID, c.Seq)
	}
}

// Wake makes the deliverer look at the outbox now: an event was queued,
// or a member that joined or left may have freed event streams. It
// never blocks.
func (d *Deliverer) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Acked tells the deliverer that event seq of flow flowID was
// acknowledged in the transaction of what its controller did for it
// (sdk.AdvanceRequest.AckSeq): when the flow's delivery is in flight, it
// then writes no acknowledgement of its own. Changed calls it for the
// engine's EventAcked changes; without it, the acknowledgement after
// HandleEvent finds the event gone and writes nothing. It never blocks
// on I/O.
func (d *Deliverer) Acked(flowID string, seq int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inflight[flowID] {
		d.acked[flowID] = seq
	}
}

// ackedInTx reports whether ev was acknowledged with its controller's
// write (Acked).
func (d *Deliverer) ackedInTx(ev *sdk.Event) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.acked[ev.FlowID] == ev.Seq
}

// Start begins delivering, in the background until Stop. Starting a
// started deliverer does nothing.
func (d *Deliverer) Start(ctx context.Context) error {
	return d.life.Start(ctx, func(context.Context) error {
		d.life.Go(d.loop)
		return nil
	})
}

// Stop stops delivering and waits for deliveries in flight, which are
// cancelled; their events stay in the outbox. With a Member, it then
// releases the event streams it holds, so that another gateway takes
// them at once. When ctx ends first, the error names event delivery.
// Stopping a stopped deliverer does nothing.
func (d *Deliverer) Stop(ctx context.Context) error {
	err := d.life.Stop(ctx)
	if d.cfg.Member == "" || err != nil {
		return err
	}
	if _, err := d.eng.ReleaseStreams(d.cfg.Member); err != nil {
		return fmt.Errorf("event delivery: release the event streams of member %s (the other gateways take them when its lease ends): %w", d.cfg.Member, err)
	}
	return nil
}

func (d *Deliverer) loop(ctx context.Context) {
	t := time.NewTicker(d.cfg.Poll)
	defer t.Stop()
	for {
		d.deliverDue()
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}

func (d *Deliverer) deliverDue() {
	// A flow whose delivery is in flight while the outbox is read may have
	// its head acknowledged just after: that head is stale and must wait
	// for the next read. Flows idle at the read have a head only this
	// deliverer would change.
	if d.hold.Wait() > 0 {
		return // the store failed to write: the poll comes back after the hold
	}
	if !d.indexed {
		// Events an older flowgate queued have no place in the delivery
		// queue yet.
		n, err := d.eng.IndexOutbox()
		if err != nil {
			d.storeLog.Error("index the outbox for delivery; events queued before this version wait until it works", "error", err)
		} else if n > 0 {
			d.log.Info("indexed the outbox for delivery", "entries", n)
		}
		d.indexed = err == nil
	}
	// Wakes that came due (sdk.Host.WakeAt) become flow.woken events
	// first, so this read of the outbox delivers them.
	if _, err := d.eng.FireWakes(0); err != nil {
		d.storeLog.Error("fire the due wakes", "error", err)
	}
	d.mu.Lock()
	wasBusy := maps.Clone(d.inflight)
	room := d.cfg.Concurrency - len(d.inflight)
	d.mu.Unlock()
	if room <= 0 {
		return // every delivery is taken; the one that ends wakes the loop
	}
	due, err := d.eng.NextDeliveries(room, d.skip(wasBusy))
	if err != nil {
		d.storeLog.Error("read the outbox", "error", err)
		return
	}
	if d.cfg.Member != "" {
		if due, err = d.held(due, wasBusy); err != nil {
			d.storeLog.Error("claim event streams", "error", err)
			return
		}
	}
	for _, del := range due {
		d.mu.Lock()
		busy := wasBusy[del.Event.FlowID] || d.inflight[del.Event.FlowID] || len(d.inflight) >= d.cfg.Concurrency
		if !busy {
			d.inflight[del.Event.FlowID] = true
		}
		d.mu.Unlock()
		if busy {
			continue
		}
		done := func() {
			d.mu.Lock()
			delete(d.inflight, del.Event.FlowID)
			delete(d.acked, del.Event.FlowID)
			d.mu.Unlock()
		}
		started := d.life.Go(func(ctx context.Context) {
			d.deliver(ctx, del)
			done()
			d.Wake() // the flow's next event may be due
		})
		if !started {
			done() // stopping: the event stays for the next gateway
		}
	}
}

// deliver hands one event to its controller and records the outcome.
func (d *Deliverer) deliver(ctx context.Context, del engine.Delivery) {
	ev := del.Event
	// handed is the event the controller gets: ev, or the last of the
	// task.finished events queued from ev on, for a controller that
	// folds them. Failures count against ev, the head.
	handed := ev
	h, err := d.lookup(del.Controller)
	if f, ok := h.(folder); ok && err == nil && f.foldsTaskFinished() {
		if last, ferr := d.eng.FoldTaskFinished(ev); ferr == nil {
			handed = last // else the head alone, as to any controller
		}
	}
	if err == nil {
		hctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
		err = h.HandleEvent(hctx, *handed)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s", d.cfg.Timeout)
		}
	}
	if ctx.Err() != nil {
		return // stopping: the event stays for the next gateway
	}
	if err == nil {
		// An event acknowledged in the controller's write needs none:
		// that write committed, so the store writes (aerr nil).
		var aerr error
		switch {
		case handed.Seq != ev.Seq:
			aerr = d.eng.AckThrough(ev.FlowID, handed.Seq)
		case !d.ackedInTx(ev):
			aerr = d.eng.AckEvent(ev.FlowID, ev.Seq)
		}
		if d.hold.Observe(aerr) != nil {
			d.storeLog.Error("acknowledge event; it will be delivered again", "flow", ev.FlowID, "seq", handed.Seq, "error", aerr)
			return
		}
		d.cfg.Observer.EventDelivered(del.Controller, time.Since(ev.CreatedAt))
		d.log.Debug("event delivered", "flow", ev.FlowID, "seq", ev.Seq, "type", ev.Type, "controller", del.Controller)
		return
	}
	d.cfg.Observer.DeliveryFailed(del.Controller)
	// A controller that is restarting has not failed the event: wait for
	// it without counting. One that errs, does not answer, or cannot run
	// at all (failed, not configured) counts toward blocking the flow.
	counted := !errors.Is(err, ErrUnavailable) && !errors.Is(err, sdk.ErrPluginShutdown)
	failures := ev.Deliveries
	if counted {
		failures++
	}
	// A panic would come back with the same event: it blocks the flow
	// at once.
	_, panicked := errors.AsType[*PanicError](err)
	park := counted && (failures >= d.cfg.MaxFailures || panicked)
	delay := backoff(d.cfg.Backoff, d.cfg.MaxBackoff, max(failures, 1))
	unblock := fmt.Sprintf("fix the controller, then unblock the flow (flowgate tasks flow update %s --expected-revision N --status running)", ev.FlowID)
	summary := fmt.Sprintf("controller %s failed to handle %s (event %d) %d times: %v; %s",
		del.Controller, ev.Type, ev.Seq, failures, err, unblock)
	if panicked {
		summary = fmt.Sprintf("%v; the stack is in the gateway's log; %s", err, unblock)
	}
	f := engine.EventFailure{Error: err.Error(), RetryAfter: delay, Counted: counted, Park: park, Summary: summary}
	after, ferr := d.eng.EventFailed(ev.FlowID, ev.Seq, f)
	if d.hold.Observe(ferr) != nil {
		d.storeLog.Error("record failed delivery; it will be tried again", "flow", ev.FlowID, "seq", ev.Seq, "error", ferr)
		return
	}
	if park {
		d.logParked(ev, del.Controller, after, err)
		return
	}
	d.log.Warn("event delivery failed", "flow", ev.FlowID, "seq", ev.Seq, "controller", del.Controller, "failures", failures, "counted", counted, "retry_in", delay, "error", err)
}

// logParked says what parking ev did to its flow, after: blocked it, or,
// for a flow that had already ended, nothing (after is nil when the event
// was acknowledged meanwhile).
func (d *Deliverer) logParked(ev *sdk.Event, controller string, after *sdk.Flow, err error) {
	switch {
	case after == nil:
	case after.Status == sdk.FlowBlocked:
		d.log.Error("event parked, flow blocked", "flow", ev.FlowID, "seq", ev.Seq, "controller", controller, "error", err)
	default:
		d.log.Warn("event parked; its flow had already ended, so it stays parked until the flow is pruned",
			"flow", ev.FlowID, "status", after.Status, "seq", ev.Seq, "controller", controller, "error", err)
	}
}

// backoff is the delay before the nth retry (n ≥ 1) of delivery and of
// plugin restarts: min(base·2^(n-1), ceiling).
func backoff(base, ceiling time.Duration, n int) time.Duration {
	b := float64(base) * math.Pow(2, float64(n-1))
	return time.Duration(min(b, float64(ceiling)))
}
