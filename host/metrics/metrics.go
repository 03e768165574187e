package metrics

import (
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// namespace starts every metric name.
const namespace = "flowgate"

// Metrics is one gateway's metrics: its registry and the histograms and
// counters its parts record into. Its methods are safe for concurrent
// use. Create it with New.
type Metrics struct {
	reg *prometheus.Registry
	log hclog.Logger

	taskStart   prometheus.Histogram
	taskRun     *prometheus.HistogramVec
	eventLag    *prometheus.HistogramVec
	deliveryErr *prometheus.CounterVec
	commit      prometheus.Histogram
	cronLag     prometheus.Histogram
	cronRuns    *prometheus.CounterVec
	hooks       *prometheus.CounterVec
	changes     *prometheus.CounterVec
	panics      *prometheus.CounterVec
}

// New returns metrics with their own registry, holding the recorded
// metrics and the Go and process collectors. The counts read at scrape
// time are added by Register once the parts they read exist. A nil
// logger discards the lines about failed scrapes.
func New(logger hclog.Logger) *Metrics {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	// Task and cron times span milliseconds to hours; store commits and
	// event lag milliseconds to minutes.
	long := prometheus.ExponentialBuckets(0.005, 4, 12) // 5ms … ~5.8h
	short := prometheus.ExponentialBuckets(0.0005, 3, 12)
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		log: logger,
		taskStart: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "task_start_latency_seconds",
			Help: "Time from a task becoming runnable (queued, or due to retry) to its attempt starting.", Buckets: long}),
		taskRun: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "task_run_seconds",
			Help: "Time from a task's start to its end, by the status it ended with.", Buckets: long}, []string{"status"}),
		eventLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "event_lag_seconds",
			Help: "Time from a controller event being written to its controller acknowledging it.", Buckets: short}, []string{"controller"}),
		deliveryErr: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "event_delivery_failures_total",
			Help: "Event deliveries that failed, by controller."}, []string{"controller"}),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "store_commit_seconds",
			Help: "Time one store write took, waiting for its commit group included.", Buckets: short}),
		cronLag: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "cron_fire_lag_seconds",
			Help: "Time from a cron run's scheduled time to the scheduler firing it.", Buckets: long}),
		// The job and trigger labels are names users create, few and
		// named by hand, so the series stay bounded; a request for a
		// trigger name that is no enabled trigger counts under "", so
		// callers cannot mint series.
		cronRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "cron_runs_total",
			Help: "Cron runs that ended, by job name (empty for a deleted job) and outcome (ok, error, skipped, missed, …)."}, []string{"job", "outcome"}),
		hooks: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "trigger_deliveries_total",
			Help: "Webhook deliveries by trigger (empty for a name that is no enabled trigger) and outcome (accepted, duplicate, unauthorized, rate_limited, …)."}, []string{"trigger", "outcome"}),
	}
	// The listener label names a part the gateway registers in code, so
	// its series are few and fixed.
	m.changes = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "engine_changes_total",
		Help: "Changes the engine committed and told its listeners of, by kind (task_queued, event_queued, …)."}, []string{"kind"})
	m.panics = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "engine_listener_panics_total",
		Help: "Panics of a listener of the engine's changes, recovered, by listener (runner, event delivery, …)."}, []string{"listener"})
	m.reg.MustRegister(m.taskStart, m.taskRun, m.eventLag, m.deliveryErr, m.commit, m.cronLag, m.cronRuns, m.hooks, m.changes, m.panics,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Register adds the counts read at scrape time from src. It fails when
// called twice on the same Metrics.
func (m *Metrics) Register(src Sources) error {
	return m.reg.Register(newSnapshot(src))
}

// Handler serves the registry in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it). A count that cannot be read
// is logged and left out; the rest are served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:          m.log.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Warn}),
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}

// TaskStarted records that an attempt started wait after its task became
// runnable (runner.Observer).
func (m *Metrics) TaskStarted(wait time.Duration) { m.taskStart.Observe(seconds(wait)) }

// TaskEnded records that a task ended with status after running for ran
// (runner.Observer).
func (m *Metrics) TaskEnded(status sdk.TaskStatus, ran time.Duration) {
	m.taskRun.WithLabelValues(string(status)).Observe(seconds(ran))
}

// EventDelivered records that controller acknowledged an event lag after
// it was written (pluginhost.DeliveryObserver).
func (m *Metrics) EventDelivered(controller string, lag time.Duration) {
	m.eventLag.WithLabelValues(controller).Observe(seconds(lag))
}

// DeliveryFailed records a failed delivery to controller
// (pluginhost.DeliveryObserver).
func (m *Metrics) DeliveryFailed(controller string) { m.deliveryErr.WithLabelValues(controller).Inc() }

// StoreCommitted records how long one store write took; it is the
// store's Options.OnCommit.
func (m *Metrics) StoreCommitted(took time.Duration) { m.commit.Observe(seconds(took)) }

// CronFired records that a cron run fired lag after its scheduled time
// (scheduler.Observer).
func (m *Metrics) CronFired(lag time.Duration) { m.cronLag.Observe(seconds(lag)) }

// CronRunEnded records a cron run's outcome under its job's name
// (scheduler.Observer).
func (m *Metrics) CronRunEnded(job, outcome string) { m.cronRuns.WithLabelValues(job, outcome).Inc() }

// TriggerDelivery records a webhook delivery's outcome
// (trigger.HooksConfig.Observe).
func (m *Metrics) TriggerDelivery(trigger, outcome string) {
	m.hooks.WithLabelValues(trigger, outcome).Inc()
}

// Changed counts a change the engine committed (it is an
// engine.Listener).
func (m *Metrics) Changed(c engine.Change) { m.changes.WithLabelValues(c.Kind.String()).Inc() }

// ListenerPanicked counts a panic of the engine's listener name
// (engine.ListenerObserver).
func (m *Metrics) ListenerPanicked(name string) { m.panics.WithLabelValues(name).Inc() }

// seconds is d in seconds, never negative (a clock step back is no lag).
func seconds(d time.Duration) float64 { return max(d, 0).Seconds() }
