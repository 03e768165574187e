package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// WarmArg, as the only argument of flowgate-shim, starts a warm shim
// (MainWarm): one started before its attempt exists, so that a task's
// start does not wait for a Go process to start.
const WarmArg = "--warm"

// warmHandoff is what a warm shim receives on its stdin, framed as a
// spec is (see frame): the attempt it is for, the whole environment a
// shim started for it would have had, and its spec.
type warmHandoff struct {
	Dir  string          `json:"dir"`
	Env  []string        `json:"env"`
	Spec json.RawMessage `json:"spec"`
}

// MainWarm runs a warm shim, as "flowgate-shim --warm", and returns the
// process exit code. It waits on stdin, a pipe the gateway holds, for
// its attempt (Warm.Hand); once that came, it takes the environment it
// was handed as its own and is that attempt's shim, exactly as Main
// (same exit codes). When stdin ends with nothing or a hand-over cut
// short on it (the gateway stopped, or died), it returns 3 having
// touched nothing: no attempt is claimed, so the next gateway queues the
// attempt again. It returns 2, also touching nothing, when what came
// does not name an attempt directory.
func MainWarm() int {
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGPIPE, unix.SIGCHLD)
	defer signal.Stop(sigs)

	body, err := readFrame(os.Stdin)
	if err != nil {
		return 3
	}
	now := time.Now()
	var h warmHandoff
	if err := json.Unmarshal(body, &h); err != nil || h.Dir == "" {
		return 2
	}
	os.Clearenv()
	for _, kv := range h.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			_ = os.Setenv(k, v)
		}
	}
	spec, specErr := decodeSpec(h.Spec)
	return attend(h.Dir, spec, specErr, now, sigs)
}

// Warm is a shim started before its attempt exists, waiting on a pipe
// for Hand. Its process is detached as Launch's are; it exits, having
// done nothing, when the pipe closes without an attempt: when Discard
// closes it, or when the process holding it dies.
type Warm struct {
	proc *os.Process
	pipe *os.File
}

// StartWarm starts exe with args (the lean shim and WarmArg) as a warm
// shim with env as its environment until its attempt comes.
func StartWarm(exe string, args, env []string) (*Warm, error) {
	p, w, err := start(exe, args, env, true)
	if err != nil {
		return nil, err
	}
	return &Warm{proc: p, pipe: w}, nil
}

// Process returns the warm shim's process.
func (w *Warm) Process() *os.Process { return w.proc }

// Hand gives the warm shim attempt dir and env, the whole environment
// of the shim with its spec entry (SpecEntry), as Launch takes them, and
// returns the shim's process, which is from then on the attempt's shim.
// A Warm is handed one attempt at most. When Hand fails (the warm shim
// is gone), the shim got no attempt or one cut short, on which it claims
// and runs nothing: the caller may start another shim for dir; the
// failed one is reaped.
func (w *Warm) Hand(dir string, env []string) (*os.Process, error) {
	env, spec := takeSpec(env)
	if spec == nil {
		w.Discard()
		return nil, errors.New("hand an attempt to a warm shim: env holds no spec entry (make one with shim.SpecEntry)")
	}
	body, err := json.Marshal(warmHandoff{Dir: dir, Env: env, Spec: spec})
	if err == nil {
		_, err = w.pipe.Write(frame(body))
	}
	if err != nil {
		w.Discard()
		return nil, fmt.Errorf("hand attempt %s to the warm shim (pid %d): %w", dir, w.proc.Pid, err)
	}
	_ = w.pipe.Close()
	return w.proc, nil
}

// Discard closes the warm shim's pipe, so that it exits having done
// nothing, and reaps it.
func (w *Warm) Discard() {
	_ = w.pipe.Close()
	_, _ = w.proc.Wait()
}
