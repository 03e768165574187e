package bench

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/sdk"
)

// Config is what a run needs. Dir and Controller are required; zero
// fields take their defaults.
type Config struct {
	// Dir is where the run makes its scratch directory; it measures that
	// file system. The scratch directory is removed at the end.
	Dir string
	// Quick selects QuickSizes() instead of FullSizes() for the fields of
	// Sizes left zero.
	Quick bool
	// Sizes sets the workload; zero fields take FullSizes() (or
	// QuickSizes() with Quick).
	Sizes Sizes
	// Self is the flowgate executable that serves task shims
	// ("flowgate shim DIR") and first-party plugins ("flowgate plugin
	// serve NAME"), as in a gateway. If empty, the running executable.
	Self string
	// Progress receives one line per step of the run, with the time it is
	// expected to take; if nil, progress is discarded.
	Progress io.Writer
	// Logger is the parent of the temporary gateways' loggers; if nil,
	// their logs are discarded.
	Logger hclog.Logger
	// SkipLobster leaves out the figures measured against Lobster, which
	// npm installs into the scratch directory (tests, machines offline).
	// They are also left out, with a note, when npm is missing or fails.
	SkipLobster bool
	// Controllers are the first-party controllers (plugins' Controllers),
	// run in process by the gateways of the start-and-stop figure and of
	// the figures against Lobster, as every gateway runs them. Optional:
	// without them those gateways have none.
	Controllers map[string]func(getenv func(string) string) sdk.Controller
	// Store, when set, names an etcd cluster (flowgate bench --store
	// etcd://…): the run then measures the store figures only, the raw
	// fsync rate and guarded updates on bbolt and, in a scratch prefix
	// beside the URL's, on etcd, and task claims by three gateways on
	// etcd and on bbolt (see storeRounds).
	Store backend.Spec
	// Controller is the first-party pipeline controller (plugins/pipeline's
	// New), called in process as the baseline of the controller round
	// trip; the same controller is measured as Self serves it. Required:
	// host imports no plugin, so flowgate bench passes it in.
	Controller sdk.Controller
}

// Sizes is the workload of a run.
type Sizes struct {
	// Rounds is how many interleaved rounds each comparison has; every
	// figure is the median of its rounds.
	Rounds int
	// Probe is the length of each raw fsync probe.
	Probe time.Duration
	// Updates is the length of each guarded-update measurement.
	Updates time.Duration
	// Writers is the number of writers of the many-writer update figure.
	Writers int
	// DispatchTasks is the number of tasks per dispatch round, in each
	// variant.
	DispatchTasks int
	// Concurrency is how many tasks run at once in the dispatch rounds:
	// the gateway's limits.max_running and the bare loop's goroutines.
	Concurrency int
	// ControllerCalls is the number of timed events per round and
	// variant of the controller round trip.
	ControllerCalls int
	// Flows is the number of flows in the home that is listed and
	// restarted; the baseline home has Flows/100.
	Flows int
	// ListCalls is the number of timed lists per round and home.
	ListCalls int
	// RunningTasks is the number of tasks left running across the
	// gateway restarts.
	RunningTasks int
	// ClaimTasks is the number of tasks claimed per round of the claims
	// figure (Config.Store).
	ClaimTasks int
}

// FullSizes returns the workload of flowgate bench: the sizes the targets
// in docs/performance.md are stated for. It takes a few minutes.
func FullSizes() Sizes {
	return Sizes{
		Rounds: 3, Probe: 300 * time.Millisecond, Updates: time.Second, Writers: 64,
		DispatchTasks: 1000, Concurrency: 8, ControllerCalls: 500,
		Flows: 100_000, ListCalls: 3, RunningTasks: 1000, ClaimTasks: 300,
	}
}

// QuickSizes returns the workload of flowgate bench --quick: well under a
// minute, with figures that are noisier and, for the list and the
// restart, taken over a tenth of the records.
func QuickSizes() Sizes {
	return Sizes{
		Rounds: 2, Probe: 100 * time.Millisecond, Updates: 300 * time.Millisecond, Writers: 64,
		DispatchTasks: 100, Concurrency: 8, ControllerCalls: 100,
		Flows: 10_000, ListCalls: 3, RunningTasks: 100, ClaimTasks: 100,
	}
}

// withDefaults fills the zero fields of s from d.
func (s Sizes) withDefaults(d Sizes) Sizes {
	set := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	set(&s.Rounds, d.Rounds)
	set(&s.Writers, d.Writers)
	set(&s.DispatchTasks, d.DispatchTasks)
	set(&s.Concurrency, d.Concurrency)
	set(&s.ControllerCalls, d.ControllerCalls)
	set(&s.Flows, d.Flows)
	set(&s.ListCalls, d.ListCalls)
	set(&s.RunningTasks, d.RunningTasks)
	set(&s.ClaimTasks, d.ClaimTasks)
	if s.Probe == 0 {
		s.Probe = d.Probe
	}
	if s.Updates == 0 {
		s.Updates = d.Updates
	}
	return s
}

// WithDefaults returns c with its zero fields set.
func (c Config) WithDefaults() Config {
	d := FullSizes()
	if c.Quick {
		d = QuickSizes()
	}
	c.Sizes = c.Sizes.withDefaults(d)
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// Validate names the first field that holds an impossible value.
func (c Config) Validate() error {
	s := c.Sizes
	switch {
	case c.Dir == "":
		return errors.New("bench config: Dir is required (the directory whose file system is measured)")
	case s.Rounds < 1, s.Writers < 1, s.DispatchTasks < 1, s.Concurrency < 1, s.ControllerCalls < 1, s.ListCalls < 1, s.RunningTasks < 1, s.ClaimTasks < 1:
		return fmt.Errorf("bench config: every count in Sizes must be at least 1 (got %+v)", s)
	case s.Flows < 100:
		return fmt.Errorf("bench config: Sizes.Flows must be at least 100 (got %d)", s.Flows)
	case s.Probe <= 0 || s.Updates <= 0:
		return fmt.Errorf("bench config: Sizes.Probe and Sizes.Updates must be positive (got %s and %s)", s.Probe, s.Updates)
	case c.Store.URL != "" && !c.Store.IsEtcd():
		return fmt.Errorf("bench config: Store %q is no etcd:// URL; bench measures bbolt in its scratch directory already", c.Store.URL)
	case c.Controller == nil:
		return errors.New("bench config: Controller is required (the pipeline controller run in process as the baseline of the controller round trip: plugins/pipeline's New)")
	}
	return nil
}
