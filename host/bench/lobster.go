package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/runner"
)

// lobsterPackage is the npm package of Lobster, the baseline of the
// pipeline figures.
const lobsterPackage = "@clawdbot/lobster"

// chainFile is a workflow of n command steps, each piping the previous
// step's stdout through cat.
func chainFile(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: chain%d\nsteps:\n  - id: s1\n    run: echo hello\n", n)
	for i := 2; i <= n; i++ {
		fmt.Fprintf(&b, "  - id: s%d\n    run: cat\n    stdin: $s%d.stdout\n", i, i-1)
	}
	return b.String()
}

// forEachFile is a workflow that runs an echo step for each of n items.
func forEachFile(n int) string {
	return fmt.Sprintf(`name: foreach%d
steps:
  - id: items
    run: |
      seq 1 %d | awk 'BEGIN { printf "[" } { printf "%%s%%s", (NR > 1 ? "," : ""), $1 } END { print "]" }'
  - id: each
    for_each: $items.json
    item_var: n
    steps:
      - id: say
        run: echo item
`, n, n)
}

// installLobster installs Lobster with npm into the scratch directory and
// returns its executable, or why it cannot.
func (r *run) installLobster(ctx context.Context) (string, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not installed")
	}
	prefix := filepath.Join(r.tmp, "lobster")
	out, err := exec.CommandContext(ctx, npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", lobsterPackage).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("npm install %s failed: %v: %s", lobsterPackage, err, lastLine(string(out)))
	}
	return filepath.Join(prefix, "node_modules", ".bin", "lobster"), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// lobster measures workflow files run by flowgate pipeline run against
// the same files run by Lobster, in interleaved rounds: a 20-step chain
// with a gateway running and with none (the command hosts one), a
// 100-way for_each and a 10-stage pipeline string over 10,000 objects
// with a gateway running. Each run is the whole command
// as a user types it, timed from start to exit; each must succeed. Each
// round also runs the chain's steps with no store and no controller
// (chainFloor), the floor of a step beside Lobster's time per step.
func (r *run) lobster(ctx context.Context) ([]Figure, error) {
	figs := []Figure{
		{Name: FigChainGateway, Title: "20-step workflow, gateway running", Unit: "s", BaselineTitle: "Lobster", BaselineUnit: "s",
			Target: &Target{Of: "ratio", Op: "<=", Limit: 0.4}, Note: "flowgate pipeline run of 20 steps piping through cat, against lobster run of the same file"},
		{Name: FigChainCold, Title: "20-step workflow, no gateway running", Unit: "s", BaselineTitle: "Lobster", BaselineUnit: "s",
			Target: &Target{Of: "ratio", Op: "<=", Limit: 0.6}, Note: "the command hosts a gateway for its own duration"},
		{Name: FigForEach, Title: "100-way for_each of echo, gateway running", Unit: "s", BaselineTitle: "Lobster", BaselineUnit: "s",
			Target: &Target{Of: "ratio", Op: "<=", Limit: 0.5}},
		{Name: FigPipelineString, Title: "10-stage pipeline string over 10,000 objects, gateway running", Unit: "s", BaselineTitle: "Lobster", BaselineUnit: "s",
			Target: &Target{Of: "ratio", Op: "<=", Limit: 0.5}, Note: "flowgate pipeline run of exec --json | where | sort | dedupe | groupBy | map | map | pick | head | json, against lobster run of the same string"},
		{Name: FigChainFloor, Title: "a chain step's floor: pooled shim, child and recorded end, no store", Unit: "ms",
			BaselineTitle: "Lobster, per step of the 20-step chain", BaselineUnit: "ms",
			Note: "the 20-step chain's steps run as the runner runs tasks, on the shims of its pool, with no store and no controller; no target: it bounds what a step costs before any record"},
	}
	if r.cfg.SkipLobster {
		r.skip(figs, "left out (--no-lobster)")
		return nil, nil
	}
	lobster, err := r.installLobster(ctx)
	if err != nil {
		r.skip(figs, err.Error())
		return nil, nil
	}
	dir := filepath.Join(r.tmp, "workflows")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	chain, each := filepath.Join(dir, "chain20.lobster"), filepath.Join(dir, "foreach100.lobster")
	if err := os.WriteFile(chain, []byte(chainFile(20)), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(each, []byte(forEachFile(100)), 0o600); err != nil {
		return nil, err
	}
	objects, err := pipelineItems(dir)
	if err != nil {
		return nil, err
	}
	daemon := filepath.Join(r.tmp, "lw")
	g, err := r.newPipelineGateway(daemon)
	if err != nil {
		return nil, err
	}
	bg := context.WithoutCancel(ctx)
	if err := g.Start(bg); err != nil {
		return nil, err
	}
	defer func() { _ = g.Stop(bg) }()
	cold := filepath.Join(r.tmp, "lc")
	// A run names a workflow file, or with text set a pipeline string.
	runs := []struct {
		fig, file string
		flowgate  string // home; empty for the Lobster baseline
		text      bool
	}{
		{FigChainGateway, chain, "", false}, {FigChainGateway, chain, daemon, false}, {FigChainCold, chain, cold, false},
		{FigForEach, each, "", false}, {FigForEach, each, daemon, false},
		{FigPipelineString, pipelineString(objects), "", true}, {FigPipelineString, pipelineString(objects), daemon, true},
	}
	byName := map[string]*Figure{}
	for i := range figs {
		byName[figs[i].Name] = &figs[i]
	}
	shims, stopWarm := r.warmShims(bg)
	defer stopWarm()
	base := map[string][]float64{}
	for round := range r.sz.Rounds {
		d, err := chainFloor(ctx, shims, filepath.Join(r.tmp, "floor", strconv.Itoa(round)), 20)
		if err != nil {
			return nil, err
		}
		byName[FigChainFloor].Rounds = append(byName[FigChainFloor].Rounds, float64(d.Microseconds())/1000)
		for _, run := range runs {
			cmd := exec.CommandContext(ctx, lobster, "run", "--mode", "tool", "--file", run.file)
			switch {
			case run.flowgate != "" && run.text:
				cmd = exec.CommandContext(ctx, r.cfg.Self, "pipeline", "run", "--mode", "tool", run.file)
			case run.flowgate != "":
				cmd = exec.CommandContext(ctx, r.cfg.Self, "pipeline", "run", run.file)
			case run.text:
				cmd = exec.CommandContext(ctx, lobster, "run", "--mode", "tool", run.file)
			}
			if run.flowgate != "" {
				cmd.Env = append(os.Environ(), "FLOWGATE_HOME="+run.flowgate)
			}
			cmd.Dir = dir
			start := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(start).Seconds()
			if err != nil {
				return nil, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
			}
			f := byName[run.fig]
			if run.flowgate == "" {
				base[run.fig] = append(base[run.fig], took)
				continue
			}
			f.Rounds = append(f.Rounds, took)
		}
	}
	for i := range figs {
		figs[i].Value, figs[i].Baseline = median(figs[i].Rounds), median(base[figs[i].Name])
		switch figs[i].Name {
		case FigChainCold:
			figs[i].Baseline = median(base[FigChainGateway])
		case FigChainFloor:
			figs[i].Baseline = median(base[FigChainGateway]) * 1000 / 20
		}
	}
	return figs, nil
}

// skip notes that figs were not measured, and why, in the progress and
// in the report.
func (r *run) skip(figs []Figure, why string) {
	for _, f := range figs {
		r.skipped = append(r.skipped, fmt.Sprintf("%s: %s", f.Title, why))
	}
	r.progress("the %d figures against Lobster are not measured: %s", len(figs), why)
}

// warmShims returns the shims of the run's executable with one kept warm,
// as a gateway's runner keeps it, and the function that stops keeping it
// and reaps the waiting one.
func (r *run) warmShims(ctx context.Context) (*runner.Shims, func()) {
	shims := runner.NewShims(r.cfg.Self, r.cfg.Logger.Named("bench"))
	kctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		shims.KeepWarm(kctx)
	}()
	return shims, func() {
		cancel()
		<-done
	}
}

// newPipelineGateway returns a gateway over home that serves its socket
// and runs the pipeline controller in its own process, as a daemon does.
func (r *run) newPipelineGateway(home string) (*gateway.Gateway, error) {
	return r.gateway(home, r.sz.Concurrency, r.cfg.Controllers)
}
