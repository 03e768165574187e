// Package bench is flowgate bench: it measures, on one machine and file
// system, each figure that docs/performance.md sets a target for, beside
// a baseline measured in the same run, in the spirit of etcdctl check
// perf and pg_test_fsync. Absolute rates differ by orders of magnitude
// between machines; ratios to a baseline taken in the same interleaved
// rounds carry over, so noise on the machine hits both alike.
//
// # Why it is a package of its own
//
// Each figure crosses the store, the engine, the gateway, the runner and
// its shims, the plugin supervisor and, for the baselines, Lobster and
// bare fork/exec, so no one package is what bench measures: beside the
// gateway it would make the gateway import a harness of itself, and the
// CLI ships it as a command, so it cannot live in test files. What does
// measure one package, a Go benchmark, sits beside that package in its
// bench_test.go.
//
// # Figures
//
// Run measures, in this order (Figure.Name in parentheses):
//
//   - the raw fsync rate of the directory (raw_fsync): store.ProbeFsync,
//     the baseline of the next two;
//   - guarded flow updates (guarded_update_1_writer,
//     guarded_update_many_writers): engine.UpdateFlow with the expected
//     revision on a real store, by 1 writer and by Sizes.Writers writers
//     on their own flows; targets ≥ 0.3× and ≥ 3× the raw fsync rate;
//   - task dispatch (task_dispatch): tasks of true created through a
//     temporary gateway's client, from the first create to the last end,
//     after one untimed task per slot has filled the gateway's pool of
//     idle shims, against bare fork/exec of true at the same
//     concurrency; target ≥ 0.3×; beside it, what a task's four new
//     inodes cost in the file system before each round (task_files),
//     which on ext4 without a journal swings from tens of microseconds
//     to over a millisecond with the files removed there in the minutes
//     before, and the store writer's share of the rounds' time
//     (store_writer_busy, store.WriterStats), split between the engine's
//     work inside the transactions and bbolt's commit; and the CPU per
//     task (task_cpu, target ≤ 3 ms) of the gateway, its shims and the
//     tasks: the pooled shims outlive the tasks, so they are counted
//     once the gateway's stop has reaped them, less their time before
//     the round, read on Linux from their threads' schedstat;
//   - the controller round trip (controller_round_trip,
//     controller_round_trip_read): an event delivered to the first-party
//     pipeline controller served by Config.Self ("flowgate plugin serve
//     pipeline") under the gateway's plugin supervisor, against the same
//     controller called in process; target ≤ 2.5× at the median;
//   - tasks flow list (flow_list): the engine calls the CLI makes for its
//     default page of 100 (ViewFlows, then CountFlows) over Sizes.Flows
//     flows, against the same over a hundredth of them; target < 50 ms;
//     flow_list_all is the same with --limit 0 (every flow), no target;
//   - the gateway's restart (gateway_restart, gateway_rss): Start over
//     the same flows with Sizes.RunningTasks tasks of sleep 7200 left
//     running by the previous gateway, and the resident set after it,
//     against a start over an empty home; target < 1 s.
//
// Every figure is the median of its rounds; Figure.Ratio is Value over
// Baseline. Timings are never checked; correctness is: a stale revision
// must be refused, every dispatched task must succeed, each controller
// event must start exactly one task, each list must return every flow.
//
// # Processes and clean-up
//
// Shims and plugins are started from Config.Self as a gateway starts them,
// so a test binary that serves "shim" and "plugin" (see cli's TestMain)
// can stand in for flowgate. Everything lives in a scratch directory
// under Config.Dir, removed when Run returns. When ctx is cancelled (the
// CLI cancels it on SIGINT and SIGTERM), Run stops at the next step,
// cancels the running sleepers through a gateway's client, waits for
// them to end, stops its gateways and plugin, and removes the directory.
package bench
