package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// Sources are what the counts are read from at each scrape. Engine is
// required; a nil field other than Engine leaves its metrics out.
type Sources struct {
	// Engine answers flows and tasks by status and the open gates.
	Engine *engine.Engine
	// Runner answers the cap on running tasks and the attempts it follows.
	Runner interface {
		MaxRunning() int
		Running() int
	}
	// Plugins describes the controller plugins (restarts, pending events).
	Plugins func() []pluginhost.Status
	// Space answers the store file's size and free bytes.
	Space func() (store.Space, error)
	// Writer answers what the store's one writer has done: its commits
	// and the time it was busy (a bbolt store's).
	Writer func() store.WriterStats
	// Now is the clock for gate ages; if nil, time.Now.
	Now func() time.Time
}

// snapshot is the collector that reads Sources at scrape time.
type snapshot struct {
	src Sources

	flows, tasks, maxRunning, following      *prometheus.Desc
	gatesOpen, gateAge, fileBytes, freeBytes *prometheus.Desc
	commits, writerBusy                      *prometheus.Desc
	pluginRestarts, pluginPending            *prometheus.Desc
}

func newSnapshot(src Sources) *snapshot {
	if src.Now == nil {
		src.Now = time.Now
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
	}
	return &snapshot{
		src:        src,
		flows:      d("flows", "Flows in the store, by status.", "status"),
		tasks:      d("tasks", "Tasks in the store, by status.", "status"),
		maxRunning: d("tasks_max_running", "The cap on tasks running at once; the rest wait queued."),
		following:  d("runner_following", "Task attempts this gateway's runner follows now."),
		gatesOpen:  d("gates_open", "Flows waiting at an approval or input gate."),
		gateAge:    d("gate_oldest_age_seconds", "How long the oldest open gate has waited; 0 when none is open."),
		fileBytes:  d("store_file_bytes", "Size of the store file."),
		freeBytes:  d("store_free_bytes", "Bytes of the store file in free pages (compaction gives them back)."),
		commits:    d("store_commits_total", "Transactions the store committed; a group commit carries several writes."),
		writerBusy: d("store_writer_busy_seconds_total",
			"Time the store's one writer spent in write transactions, fsyncs included; its rate near 1 means writes queue behind one another."),
		pluginRestarts: d("plugin_restarts_total", "Restarts of a controller plugin since the gateway started.", "plugin"),
		pluginPending:  d("plugin_pending_events", "Events waiting for a controller plugin to acknowledge them.", "plugin"),
	}
}

// Describe sends every metric the snapshot can send.
func (s *snapshot) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.flows, s.tasks, s.maxRunning, s.following, s.gatesOpen, s.gateAge,
		s.fileBytes, s.freeBytes, s.commits, s.writerBusy, s.pluginRestarts, s.pluginPending} {
		ch <- d
	}
}

// Collect reads the sources. A source that fails sends an invalid metric,
// which the handler logs; the others are still sent.
func (s *snapshot) Collect(ch chan<- prometheus.Metric) {
	s.collectRecords(ch)
	if r := s.src.Runner; r != nil {
		ch <- prometheus.MustNewConstMetric(s.maxRunning, prometheus.GaugeValue, float64(r.MaxRunning()))
		ch <- prometheus.MustNewConstMetric(s.following, prometheus.GaugeValue, float64(r.Running()))
	}
	if s.src.Space != nil {
		if sp, err := s.src.Space(); err != nil {
			ch <- prometheus.NewInvalidMetric(s.fileBytes, err)
		} else {
			ch <- prometheus.MustNewConstMetric(s.fileBytes, prometheus.GaugeValue, float64(sp.FileBytes))
			ch <- prometheus.MustNewConstMetric(s.freeBytes, prometheus.GaugeValue, float64(sp.FreeBytes))
		}
	}
	if s.src.Writer != nil {
		w := s.src.Writer()
		ch <- prometheus.MustNewConstMetric(s.commits, prometheus.CounterValue, float64(w.Commits))
		ch <- prometheus.MustNewConstMetric(s.writerBusy, prometheus.CounterValue, w.Busy.Seconds())
	}
	if s.src.Plugins != nil {
		for _, p := range s.src.Plugins() {
			ch <- prometheus.MustNewConstMetric(s.pluginRestarts, prometheus.CounterValue, float64(p.Restarts), p.Name)
			ch <- prometheus.MustNewConstMetric(s.pluginPending, prometheus.GaugeValue, float64(p.Pending), p.Name)
		}
	}
}

// collectRecords sends the counts read from the engine: every status,
// zero included, so a status that empties shows 0 rather than vanishing.
func (s *snapshot) collectRecords(ch chan<- prometheus.Metric) {
	if flows, err := s.src.Engine.CountFlows(); err != nil {
		ch <- prometheus.NewInvalidMetric(s.flows, err)
	} else {
		for _, st := range sdk.FlowStatuses() {
			ch <- prometheus.MustNewConstMetric(s.flows, prometheus.GaugeValue, float64(flows.ByStatus[st]), string(st))
		}
	}
	if tasks, err := s.src.Engine.CountTasks(); err != nil {
		ch <- prometheus.NewInvalidMetric(s.tasks, err)
	} else {
		for _, st := range sdk.TaskStatuses() {
			ch <- prometheus.MustNewConstMetric(s.tasks, prometheus.GaugeValue, float64(tasks[st]), string(st))
		}
	}
	gates, err := s.src.Engine.OpenGates(engine.GateFilter{})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(s.gatesOpen, err)
		return
	}
	var oldest time.Duration
	for _, g := range gates {
		oldest = max(oldest, s.src.Now().Sub(g.Since))
	}
	ch <- prometheus.MustNewConstMetric(s.gatesOpen, prometheus.GaugeValue, float64(len(gates)))
	ch <- prometheus.MustNewConstMetric(s.gateAge, prometheus.GaugeValue, oldest.Seconds())
}
