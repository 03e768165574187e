package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// ShimBinary is the name of the lean shim binary (cli/flowgate-shim) the
// default launcher looks for next to the running executable.
const ShimBinary = "flowgate-shim"

// defaultShims returns the Shims of the running executable and their
// Launch, the defaults of Config.Shims and Config.Launch; when the
// executable cannot be found, no Shims and a Launch that says so.
func defaultShims(log hclog.Logger) (*Shims, func(dir string, env []string) (*os.Process, error)) {
	exe, err := os.Executable()
	if err != nil {
		err = fmt.Errorf("find the flowgate executable to run the shim: %w", err)
		return nil, func(string, []string) (*os.Process, error) { return nil, err }
	}
	s := NewShims(exe, log)
	return s, s.Launch
}

// Shims starts the shims of a gateway whose executable is exe:
// "flowgate-shim <dir>" (ShimBinary) when that binary sits next to exe
// and was built from the same version, else exe itself as
// "<exe> shim <dir>". The lean binary saves each task the
// initialisation of every package the full binary links (see
// docs/performance.md); the fallback keeps a lone flowgate binary
// working, and keeps a shim of another version, which may not speak the
// same spec and record, from running tasks. While KeepWarm runs, a pool
// of shims waits for the next attempt (see KeepWarm), started from the
// same file: the full binary's start is then paid once per pooled shim
// rather than once per task, so a lone flowgate (go install
// ./cli/flowgate, go run) gets the pool's fast path too.
//
// The versions are read from the build information of the two files
// (the module version, and the commit and whether the tree was modified
// when the build stamped them); two files without any are taken to be
// the same. The answer is kept until either file changes, and a mismatch
// is logged once, naming both versions and what to do.
type Shims struct {
	// MaxIdle bounds the idle shims of the pool (see KeepWarm); zero
	// means DefaultMaxIdleShims, a negative value none, so that every
	// task starts a shim of its own. Set it before the first Start.
	MaxIdle int
	// IdleTimeout is how long an idle shim waits for an attempt before
	// it is let go; zero means DefaultShimIdleTimeout.
	IdleTimeout time.Duration

	exe string
	log hclog.Logger

	mu sync.Mutex
	// seen is the pair of files the answer lean is for.
	seen [2]os.FileInfo
	lean bool

	warm warmPool
}

// NewShims returns the launcher of the shims of executable exe; log, if
// not nil, receives the line about a lean shim of another version.
func NewShims(exe string, log hclog.Logger) *Shims {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Shims{exe: exe, log: log}
}

// Launch starts a shim for attempt directory dir alone, with env as its
// whole environment, holding the spec entry (see Config.Launch); the
// caller reaps it.
func (s *Shims) Launch(dir string, env []string) (*os.Process, error) {
	c := s.command()
	return shim.Launch(c.path, c.args(dir), env)
}

// Start gives attempt directory dir, with env as Launch takes it, to an
// idle shim of the pool while KeepWarm runs and one is ready, or else
// starts one for it as Launch does. Hand the run back with Done once the
// attempt is settled.
func (s *Shims) Start(dir string, env []string) (*ShimRun, error) {
	c := s.command()
	if c.of != nil {
		if run := s.handWarm(c, dir, env); run != nil {
			return run, nil
		}
	}
	p, err := shim.Launch(c.path, c.args(dir), env)
	if err != nil {
		return nil, err
	}
	return ownRun(p), nil
}

// shimCommand is how a shim is started: the file at path, as of says it
// is (nil when it could not be read: no shim of it is pooled), run with
// lead before its own argument.
type shimCommand struct {
	path string
	of   os.FileInfo
	lead []string
}

// args returns the arguments that start a shim of c for arg, an attempt
// directory or shim.WarmArg.
func (c shimCommand) args(arg string) []string {
	return append(slices.Clip(c.lead), arg)
}

// command returns the lean shim when it may be used, else exe's "shim"
// command.
func (s *Shims) command() shimCommand {
	if lean, fi := s.leanPath(); lean != "" {
		return shimCommand{path: lean, of: fi}
	}
	fi, err := os.Stat(s.exe)
	if err != nil {
		fi = nil
	}
	return shimCommand{path: s.exe, of: fi, lead: []string{"shim"}}
}

// ownRun is the ShimRun of p, a shim started for one attempt: it ends
// when p exits, which ownRun reaps.
func ownRun(p *os.Process) *ShimRun {
	exited := make(chan struct{})
	go func() {
		_, _ = p.Wait() // the attempt's outcome is in its record
		close(exited)
	}()
	return &ShimRun{Process: p, Ended: exited, Exited: exited}
}

// maxIdle is MaxIdle, or its default.
func (s *Shims) maxIdle() int {
	if s.MaxIdle == 0 {
		return DefaultMaxIdleShims
	}
	return max(s.MaxIdle, 0)
}

// idleTimeout is IdleTimeout, or its default.
func (s *Shims) idleTimeout() time.Duration {
	if s.IdleTimeout == 0 {
		return DefaultShimIdleTimeout
	}
	return s.IdleTimeout
}

// leanPath returns the path of the lean shim and what it was when it
// may be used, or "".
func (s *Shims) leanPath() (string, os.FileInfo) {
	lean := filepath.Join(filepath.Dir(s.exe), ShimBinary)
	fi, err := os.Stat(lean)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", nil
	}
	self, err := os.Stat(s.exe)
	if err != nil {
		return "", nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sameFile(s.seen[0], self) || !sameFile(s.seen[1], fi) {
		s.seen, s.lean = [2]os.FileInfo{self, fi}, s.sameVersion(lean)
	}
	if !s.lean {
		return "", nil
	}
	return lean, fi
}

// sameVersion reports whether the lean shim at lean was built from the
// version exe was, and logs the difference when it was not.
func (s *Shims) sameVersion(lean string) bool {
	want, got := buildVersion(s.exe), buildVersion(lean)
	if want == got {
		return true
	}
	s.log.Warn(fmt.Sprintf("%s next to %s was built from another version, so tasks run under \"%s shim\" instead, "+
		"whose start costs about 5 ms more CPU when a task finds no pooled shim: install both from the same version "+
		"(go install github.com/flowgate/flowgate/cli/flowgate-shim@VERSION, as for flowgate) or remove %s",
		ShimBinary, filepath.Base(s.exe), filepath.Base(s.exe), lean),
		"shim", lean, "shim_version", describeVersion(got), "flowgate", s.exe, "flowgate_version", describeVersion(want))
	return false
}

// sameFile reports whether a and b are the same file, unchanged: a nil
// a (nothing seen yet) is not.
func sameFile(a, b os.FileInfo) bool {
	return a != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
