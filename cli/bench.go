package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/bench"
	"github.com/flowgate/flowgate/plugins"
	"github.com/flowgate/flowgate/plugins/pipeline"
)

func newBenchCmd(e *env) *cobra.Command { return benchCmd(e, bench.Sizes{}) }

// benchCmd is flowgate bench with the workload's sizes set (the zero
// value: the full or quick sizes); tests make it smaller still.
func benchCmd(e *env, sizes bench.Sizes) *cobra.Command {
	var (
		asJSON, quick, skipLobster bool
		dir                        string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure this machine against the performance targets (fsync, updates, dispatch, commands, workflows, plugins, list, restart)",
		Long: `bench measures, on the file system of the home (or --dir), in one run of
interleaved rounds, each figure of docs/performance.md beside its baseline:
the raw fsync rate; guarded flow updates with 1 and 64 writers against it;
task dispatch through a temporary gateway against bare fork/exec, with the
CPU per task and the tasks running at once; the time from a task's
creation to its command's start; tasks run true and an in-process
gateway's start and stop with no gateway running; workflow files run by
flowgate pipeline run against Lobster (installed with npm into the scratch
directory; left out, saying why, without npm or with --no-lobster); the
controller round trip to a first-party plugin against the same controller
in process; tasks flow list and the run center's first page over 100,000
flows; and the gateway's restart time and memory with 100,000 flows and
1,000 running tasks. It prints each figure with its ratio to its baseline
and a verdict against the targets.

Everything it makes lives in a scratch directory under the home (or --dir)
and is removed at the end, also on Ctrl-C. The full run takes a few
minutes; --quick takes well under one, over smaller workloads. Progress
goes to stderr.

With --store etcd://HOST:PORT/PREFIX (and --cacert, --cert, --key, --user)
it measures the store figures only, in the same rounds: the raw fsync rate
and guarded flow updates with 1 and 64 writers on bbolt, the same on etcd,
and task claims per second by three gateways (three etcd clients) against
three claimers on bbolt. It writes under PREFIX.bench-PID-TIME, beside the
installation's prefix, and deletes that at the end. An etcd on the same
disk as --dir makes the ratios to the raw fsync rate meaningful; flowgate
links no etcd server, so start one (or, in a source tree, run
go test -run x -bench EtcdStore -benchtime 1x ./host/bench/, which embeds
one).`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				h, err := e.home()
				if err != nil {
					return err
				}
				dir = h
			}
			if e.store.URL != "" && !e.store.IsEtcd() {
				return usageError{fmt.Errorf("bench --store takes an etcd:// URL (got %s): bbolt is measured in the scratch directory on every run", e.store.URL)}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := bench.Run(ctx, bench.Config{Dir: dir, Quick: quick, Sizes: sizes, Progress: e.stderr, Controller: pipeline.New(), Controllers: plugins.Controllers(), SkipLobster: skipLobster, Store: e.store})
			if err != nil {
				return err
			}
			return printer{e.stdout, asJSON}.emit(rep, func(w io.Writer) { writeBench(w, rep) })
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fl.BoolVar(&quick, "quick", false, "smaller workloads (10,000 flows, 100 running tasks, fewer rounds): well under a minute")
	fl.StringVar(&dir, "dir", "", "measure the file system of this directory (default: the home)")
	fl.BoolVar(&skipLobster, "no-lobster", false, "leave out the figures against Lobster (which npm installs into the scratch directory)")
	return cmd
}

func writeBench(w io.Writer, r bench.Report) {
	kind := "full"
	if r.Quick {
		kind = "quick"
	}
	fmt.Fprintf(w, "flowgate bench (%s) on %s: %d CPUs, %s %s, %s, %s\n\n", kind, r.Dir, r.Machine.CPUs, r.Machine.Go, r.Machine.OS,
		r.Started.Format("2006-01-02 15:04"), (time.Duration(r.Seconds) * time.Second).String())
	var t table
	t.add("Figure", "Value", "Baseline", "Ratio", "Target", "Verdict")
	var notes []string
	for i, f := range r.Figures {
		base, ratio, target, verdict := "-", "-", "-", "-"
		if f.Baseline > 0 {
			base = fmt.Sprintf("%s %s (%s)", bench.Format(f.Baseline), f.BaselineUnit, f.BaselineTitle)
			ratio = bench.Format(f.Ratio) + "×"
		}
		if f.Target != nil {
			target = f.Target.String()
			if f.Target.Of == "value" {
				target += " " + f.Unit
			}
		}
		if f.Met != nil {
			verdict = map[bool]string{true: "met", false: "NOT MET"}[*f.Met]
		}
		title := f.Title
		if f.Note != "" {
			notes = append(notes, fmt.Sprintf("[%d] %s", i+1, f.Note))
			title += fmt.Sprintf(" [%d]", i+1)
		}
		t.add(title, bench.Format(f.Value)+" "+f.Unit, base, ratio, target, verdict)
	}
	t.write(w)
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintln(w)
		for _, s := range r.Skipped {
			fmt.Fprintln(w, "not measured: "+s)
		}
	}
	fmt.Fprintf(w, "\nverdict: %s\n", r.Verdict.Line)
}
