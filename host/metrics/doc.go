// Package metrics is the gateway's Prometheus metrics: what it counts, how
// it is read, and the handler that serves it as /metrics.
//
// # Two kinds of metric
//
// Counts of records (flows and tasks by status, open gates and the age of
// the oldest, the store file's size, the plugins' restarts and pending
// events) are read from the engine, the store and the supervisor when a
// scrape asks for them, so they always match the store: there is no
// second tally to drift. Latencies and events (how long a task waited to
// start and how long it ran, event delivery lag and failures, store
// commit latency, cron fire lag and runs by outcome, the engine's changes
// and its listeners' panics) are recorded as they happen by the parts
// that see them, which call the methods of Metrics through the small
// observer interfaces they declare (runner.Observer,
// pluginhost.DeliveryObserver, scheduler.Observer, store.Options.OnCommit,
// engine.Listener, engine.ListenerObserver).
//
// # No global state
//
// Every Metrics owns its own prometheus.Registry; nothing is registered
// with the client library's default registry, so two gateways in one
// process (tests) never share a counter.
//
// # Names
//
// Every name starts with flowgate_. Durations are in seconds, sizes in
// bytes, counters end in _total:
//
//	flowgate_flows{status}                      gauge, from the store
//	flowgate_tasks{status}                      gauge, from the store
//	flowgate_tasks_max_running                  gauge, the runner's cap
//	flowgate_runner_following                   gauge, attempts this runner follows
//	flowgate_gates_open                         gauge
//	flowgate_gate_oldest_age_seconds            gauge, 0 when none is open
//	flowgate_store_file_bytes                   gauge
//	flowgate_store_free_bytes                   gauge
//	flowgate_store_commits_total                counter, since the store was opened
//	flowgate_store_writer_busy_seconds_total    counter: the one writer's time; its rate is its load
//	flowgate_plugin_restarts_total{plugin}      counter, since the gateway started
//	flowgate_plugin_pending_events{plugin}      gauge
//	flowgate_task_start_latency_seconds         histogram: queued (or due to retry) to started
//	flowgate_task_run_seconds{status}           histogram: started to ended
//	flowgate_event_lag_seconds{controller}      histogram: event written to acknowledged
//	flowgate_event_delivery_failures_total{controller}  counter
//	flowgate_store_commit_seconds               histogram: one Update, group wait included
//	flowgate_cron_fire_lag_seconds              histogram: scheduled time to fired
//	flowgate_cron_runs_total{job,outcome}       counter: ok, error, skipped, missed, …
//	flowgate_engine_changes_total{kind}         counter: task_queued, event_queued, …
//	flowgate_engine_listener_panics_total{listener}  counter: runner, event delivery, …
//
// The Go runtime and process collectors are registered too (go_*,
// process_*).
package metrics
