package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// ProbeConfig says how the runner checks that the network is back before
// it retries a task after a transient failure. A task names its endpoint
// in TaskSpec.Probe; an agent task that names none uses Endpoint.
type ProbeConfig struct {
	// Endpoint is the "host:port" probed for agent tasks that name none.
	// If empty, such tasks are retried without a network check.
	Endpoint string `yaml:"endpoint"`
	// Interval is the time between two probes while the network is down.
	// If zero, 15s.
	Interval time.Duration `yaml:"-"`
	// Timeout bounds one probe, the DNS lookup and the TCP connect
	// together. If zero, 5s.
	Timeout time.Duration `yaml:"-"`
	// MaxOffline is how long the runner waits for the network before it
	// gives the task up as failed, with reason "offline". If zero, 1h.
	MaxOffline time.Duration `yaml:"-"`
}

// WithDefaults returns a copy of c with zero fields set to their defaults.
func (c ProbeConfig) WithDefaults() ProbeConfig {
	if c.Interval == 0 {
		c.Interval = 15 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Second
	}
	if c.MaxOffline == 0 {
		c.MaxOffline = time.Hour
	}
	return c
}

// Validate names the first field that holds an impossible value.
func (c ProbeConfig) Validate() error {
	if c.Interval < 0 || c.Timeout < 0 || c.MaxOffline < 0 {
		return fmt.Errorf("probe interval, timeout and max_offline must not be negative (got %s, %s and %s)", c.Interval, c.Timeout, c.MaxOffline)
	}
	return validEndpoint("probe.endpoint", c.Endpoint)
}

// validEndpoint checks that a non-empty endpoint is "host:port".
func validEndpoint(field, endpoint string) error {
	if endpoint == "" {
		return nil
	}
	if host, port, err := net.SplitHostPort(endpoint); err != nil || host == "" || port == "" {
		return fmt.Errorf("%s %q must be host:port, e.g. api.example.com:443", field, endpoint)
	}
	return nil
}

// Probe checks the network once: it resolves the host of endpoint
// ("host:port") and opens, then closes, a TCP connection to it, within
// timeout. It returns what failed.
func Probe(ctx context.Context, endpoint string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return fmt.Errorf("probe endpoint %q is not host:port: %w", endpoint, err)
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", host, err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addrs[0], port))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	return conn.Close()
}

// probeEndpoint is the endpoint probed before task's retries, or "".
func (r *Runner) probeEndpoint(task *stored.Task) string {
	if task.Spec.Probe != "" || task.Runtime != sdk.RuntimeAgent {
		return task.Spec.Probe
	}
	return r.cfg.Probe.Endpoint
}

// errOffline is returned by awaitNetwork when the network stayed down
// past the configured MaxOffline.
var errOffline = errors.New("the network stayed down")

// awaitNetwork probes task's endpoint until it answers and returns how
// long it did not (zero when it answered at once, or the task has no
// endpoint). It returns errOffline (wrapped, with the last probe's
// error) past MaxOffline, sdk.ErrCancelRequested when the task's cancel
// is asked for, and ctx's error when the runner stops: the next gateway
// settles the attempt again, and so probes again.
func (r *Runner) awaitNetwork(ctx context.Context, task *stored.Task, a *attempt) (time.Duration, error) {
	endpoint := r.probeEndpoint(task)
	if endpoint == "" {
		return 0, nil
	}
	cfg := r.cfg.Probe
	start := r.cfg.Now()
	for {
		err := Probe(ctx, endpoint, cfg.Timeout)
		offline := r.cfg.Now().Sub(start)
		if err == nil {
			if offline > 0 {
				r.log.Info("network back", "task", task.ID, "probe", endpoint, "offline", offline)
			}
			return offline, nil
		}
		if offline >= cfg.MaxOffline {
			return offline, fmt.Errorf("%w for %s, longer than the %s allowed (probe: %v)", errOffline, offline.Round(time.Second), cfg.MaxOffline, err)
		}
		r.log.Info("network down: waiting before the retry", "task", task.ID, "probe", endpoint, "error", err)
		t := time.NewTimer(cfg.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return offline, ctx.Err()
		case <-a.cancel:
			t.Stop()
			return offline, sdk.ErrCancelRequested
		case <-t.C:
		}
	}
}

// retryAfterNetwork queues the retry of a transient failure once the
// network answers its probe, marking the next attempt as resuming this
// one. A task cancelled while it waits ends cancelled; one whose network
// stays down too long ends failed, with reason "offline". When the runner
// stops meanwhile nothing is recorded: the next gateway decides again, as
// it does for a task Reconcile or Preview finds failed this way.
func (r *Runner) retryAfterNetwork(ctx context.Context, task *stored.Task, a *attempt, in engine.FinishInput) {
	if r.once && r.probeEndpoint(task) != "" {
		return // a command reconciling records: the gateway waits, not it
	}
	offline, err := r.awaitNetwork(ctx, task, a)
	switch {
	case errors.Is(err, errOffline):
		in.Reason, in.Error = "offline", in.Error+" (not retried: "+err.Error()+")"
		r.finish(task, in)
	case errors.Is(err, sdk.ErrCancelRequested):
		in.Status, in.Reason, in.Error = sdk.TaskCancelled, "cancelled", in.Error+" (cancelled while it waited for the network)"
		r.finish(task, in)
	case err != nil:
		r.log.Info("runner stopping while a task waits for the network; the next gateway retries it", "task", task.ID)
	default:
		r.retry(task, in.Error, engine.RequeueInput{Attempt: a.n, Class: in.Class, Offline: offline, Resume: r.probeEndpoint(task) != ""})
	}
}
