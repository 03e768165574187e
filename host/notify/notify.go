package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/lifecycle"
	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/scheduler"
)

// EventTaskFinished and EventFlowFinished are the events of a task's and
// a flow's finish notifications: the X-Flowgate-Event header and the
// "event" field of the body.
const (
	EventTaskFinished = "task.finished"
	EventFlowFinished = "flow.finished"
)

// Config tunes a Notifier. The zero value is ready to use.
type Config struct {
	// Tick is how often the loop looks for due notices besides Wake. If
	// zero, 1s.
	Tick time.Duration
	// Timeout bounds one delivery. If zero, scheduler.DefaultDeliveryTimeout.
	Timeout time.Duration
	// Now is the clock; if nil, time.Now.
	Now func() time.Time
	// Logger receives the notifier's log lines; if nil, they are discarded.
	Logger hclog.Logger
	// Leader, if set, is the leadership under which the notifier sends:
	// it sends only while that leads. Gateways sharing an etcd store
	// pass their cron leadership, so that one of them sends each notice.
	// If nil, the notifier always sends.
	Leader scheduler.Leader
	// Book sends the notices that name a destination (engine.Notice.Dest).
	// If nil, a book with no named destinations over the process's
	// environment.
	Book *dest.Book
	// Home is the gateway's home, where a failed task's stderr is read
	// for its notice; if empty, notices quote no stderr.
	Home string
	// PublicURL is the run center's address as people reach it
	// (http.public_url); if set, a notice links to its flow's page.
	PublicURL string
	// Attempts bounds the tries of a notice to a destination: after
	// that many failures it is given up (engine.NoticeGaveUp). If zero,
	// DefaultAttempts. A finish notice's command or webhook (its To) is
	// tried for as long as it is queued.
	Attempts int
	// MaxBackoff is the longest wait between two tries of a notice to a
	// destination. If zero, DefaultMaxBackoff.
	MaxBackoff time.Duration
}

// The default retry bound of a notice to a destination: 12 tries, the
// waits doubling from 5s to at most an hour, so a destination down for
// about two and a half hours still gets the message.
const (
	DefaultAttempts   = 12
	DefaultMaxBackoff = time.Hour
)

// Validate names the first field that holds an impossible value.
func (c Config) Validate() error {
	switch {
	case c.Attempts < 0:
		return fmt.Errorf("notify_retry.attempts must be at least 1 (got %d); leave it out for the default, %d", c.Attempts, DefaultAttempts)
	case c.MaxBackoff < 0 || (c.MaxBackoff > 0 && c.MaxBackoff < time.Second):
		return fmt.Errorf("notify_retry.max_backoff must be at least 1s (got %s); leave it out for the default, %s", c.MaxBackoff, DefaultMaxBackoff)
	}
	return nil
}

// WithDefaults returns a copy of c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Tick == 0 {
		c.Tick = time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Book == nil {
		c.Book, _ = dest.NewBook(dest.Config{}) // no names: nothing to refuse
	}
	if c.Attempts == 0 {
		c.Attempts = DefaultAttempts
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	return c
}

// Notifier delivers queued finish notices (see the package doc).
type Notifier struct {
	eng  *engine.Engine
	cfg  Config
	wake chan struct{}
	life lifecycle.Service
}

// New returns a stopped notifier over eng.
func New(eng *engine.Engine, cfg Config) *Notifier {
	return &Notifier{eng: eng, cfg: cfg.WithDefaults(), wake: make(chan struct{}, 1), life: lifecycle.Service{Name: "notifier"}}
}

// Start runs the delivery loop until Stop. Calling it on a started
// notifier does nothing.
func (n *Notifier) Start(ctx context.Context) error {
	return n.life.Start(ctx, func(context.Context) error {
		n.life.Go(n.loop)
		return nil
	})
}

// Stop stops the loop and waits for it, or for ctx. A delivery cut short
// stays queued for the next start.
func (n *Notifier) Stop(ctx context.Context) error { return n.life.Stop(ctx) }

// Changed wakes the loop for a queued notice (it is an engine.Listener);
// it ignores every other change. It never blocks.
func (n *Notifier) Changed(c engine.Change) {
	if c.Kind == engine.NoticeQueued {
		n.Wake()
	}
}

// Wake makes the loop look for due notices now. It never blocks.
func (n *Notifier) Wake() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *Notifier) loop(ctx context.Context) {
	t := time.NewTicker(n.cfg.Tick)
	defer t.Stop()
	for {
		if err := n.DeliverOnce(ctx); err != nil && ctx.Err() == nil {
			n.cfg.Logger.Warn("finish notices", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		case <-t.C:
		}
	}
}

// batch bounds the notices one DeliverOnce sends.
const batch = 64

// DeliverOnce sends the due notices, one after the other in the order
// they were queued, and records each outcome; under a Leader that does
// not lead it sends nothing. It returns the errors of the deliveries and
// of the records; a notice whose delivery failed stays queued with its
// next try later.
func (n *Notifier) DeliverOnce(ctx context.Context) error {
	if !scheduler.Leads(n.cfg.Leader) {
		return nil
	}
	due, err := n.eng.DueNotices(n.cfg.Now(), batch)
	if err != nil {
		return fmt.Errorf("read the queued finish notices: %w", err)
	}
	var errs []error
	for _, no := range due {
		if ctx.Err() != nil {
			break
		}
		errs = append(errs, n.deliver(ctx, no))
	}
	return errors.Join(errs...)
}

// message is the body of a finish notification: a task's (task_id,
// task) or a flow's (flow_id, flow).
type message struct {
	Event      string          `json:"event"`
	Key        string          `json:"key"`
	TaskID     string          `json:"task_id,omitempty"`
	FlowID     string          `json:"flow_id,omitempty"`
	Controller string          `json:"controller,omitempty"`
	Status     string          `json:"status"`
	Task       json.RawMessage `json:"task,omitempty"`
	Flow       json.RawMessage `json:"flow,omitempty"`
}

// messageOf is what notice no sends, and the environment its command gets.
func messageOf(no engine.Notice) (message, []string) {
	if no.FlowID != "" {
		env := []string{"FLOWGATE_NOTICE_KEY=" + no.Key, "FLOWGATE_FLOW_ID=" + no.FlowID, "FLOWGATE_FLOW_STATUS=" + no.Status}
		if no.Controller != "" {
			env = append(env, "FLOWGATE_CONTROLLER="+no.Controller)
		}
		return message{Event: EventFlowFinished, Key: no.Key, FlowID: no.FlowID, Controller: no.Controller, Status: no.Status, Flow: no.Flow}, env
	}
	return message{Event: EventTaskFinished, Key: no.Key, TaskID: no.TaskID, Status: no.Status, Task: no.Task},
		[]string{"FLOWGATE_NOTICE_KEY=" + no.Key, "FLOWGATE_TASK_ID=" + no.TaskID, "FLOWGATE_TASK_STATUS=" + no.Status}
}

func (n *Notifier) deliver(ctx context.Context, no engine.Notice) error {
	switch {
	case no.Dest != "":
		return n.deliverDest(ctx, no)
	case no.To == nil:
		// Nothing says where it goes (a record from a newer version, or
		// damage): kept forever it would be retried forever.
		n.cfg.Logger.Error("notice names no destination; given up", "key", no.Key)
		return n.eng.NoticeGaveUp(no.Key, "(none)", "the notice names no destination")
	}
	msg, env := messageOf(no)
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode the notice %s: %w", no.Key, err)
	}
	m := scheduler.Message{Event: msg.Event, Key: no.Key, Body: body, Agent: "flowgate-notify", Env: env}
	var sendErr error
	for _, d := range targets(no) {
		sendErr = errors.Join(sendErr, scheduler.Send(ctx, d, m, scheduler.DeliverOptions{Timeout: n.cfg.Timeout}))
	}
	if ctx.Err() != nil {
		return nil // stopping: the notice stays queued
	}
	if sendErr == nil {
		// Logged once recorded: a gateway killed between the send and
		// the record sends the notice again (at least once), and the log
		// must not say otherwise.
		if err := n.eng.NoticeDelivered(no.Key); err != nil {
			return err
		}
		n.cfg.Logger.Info("finish notice delivered", "key", no.Key, "status", no.Status)
		return nil
	}
	next := n.cfg.Now().Add(backoff(no.Attempts + 1))
	n.cfg.Logger.Warn("finish notice not delivered; will retry", "key", no.Key, "status", no.Status, "attempt", no.Attempts+1, "next", next, "error", sendErr)
	return errors.Join(sendErr, n.eng.NoticeFailed(no.Key, sendErr.Error(), next))
}

// targets are where notice no goes: its command, its webhook, or both.
func targets(no engine.Notice) []scheduler.Delivery {
	var out []scheduler.Delivery
	if no.To.Command != "" {
		out = append(out, scheduler.Delivery{Kind: scheduler.DeliveryCommand, Command: no.To.Command})
	}
	if no.To.Webhook != "" {
		out = append(out, scheduler.Delivery{Kind: scheduler.DeliveryWebhook, URL: no.To.Webhook})
	}
	return out
}

// backoff is the wait before try n+1 of a finish notice that failed n
// times: 5s, doubled each time, at most 5 minutes.
func backoff(n int) time.Duration {
	return min(5*time.Second<<min(n-1, 10), 5*time.Minute)
}

// backoff is the wait before try n+1 of a notice to a destination that
// failed n times: 5s, doubled each time, at most MaxBackoff.
func (c Config) backoff(n int) time.Duration {
	return min(5*time.Second<<min(n-1, 20), c.MaxBackoff)
}
