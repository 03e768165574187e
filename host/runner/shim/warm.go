package shim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// WarmArg, as the only argument of flowgate-shim, starts a warm shim
// (MainWarm): one started before its attempt exists, so that a task's
// start does not wait for a Go process to start, and kept for the
// attempts after it, so that they do not either.
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
// process exit code. It waits on stdin, a pipe the gateway holds, for an
// attempt (Warm.Hand); once one came, it takes the environment it was
// handed as its own, and is that attempt's shim exactly as Main is. When
// the attempt's status is recorded it writes one byte, Main's exit code
// for the attempt, on stdout (a pipe the gateway reads: Warm.Ended), and
// waits for the next attempt on stdin: one shim runs one attempt at a
// time, and any number of them one after another. The status is synced
// only when no next attempt comes, since one comes only once the gateway
// recorded the end in its store.
//
// It returns when stdin ends: 3 when no attempt came, having touched
// nothing (the gateway stopped, or died), 0 after one or more did. A
// hand-over cut short on stdin (the gateway died handing it over) claims
// nothing, so the next gateway queues the attempt again, and returns 3.
// It returns 2, also touching nothing, when what came does not name an
// attempt directory, and an attempt's own non-zero exit code (see Main)
// after recording it: such a shim is not trusted with another. It
// returns too when stdout is gone, its gateway with it.
func MainWarm() int {
	oneProc()
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGPIPE, unix.SIGCHLD)
	defer signal.Stop(sigs)

	// Read before the first attempt, not at each: who the shim is does
	// not change between its attempts. A shim that cannot say fails
	// each attempt it is handed, claiming none, as Main would.
	self, selfErr := identifySelf()
	in := bufio.NewReader(os.Stdin)
	// ended is the record of the attempt before, whose end is written
	// but not synced. The gateway hands a shim its next attempt only
	// once it has recorded the end of the one before, in its store, with
	// a sync of its own: a next attempt means that end needs no sync
	// here. Anything else (stdin ends, the gateway is gone) may leave the
	// end recorded only here, and it is synced before the shim exits.
	var ended *recordWriter
	defer func() {
		if ended != nil {
			_ = ended.syncClose()
		}
	}()
	for ran := false; ; ran = true {
		// A cancel that comes between two attempts was meant for the one
		// before, whose end is recorded: while the shim waits, SIGTERM
		// and SIGINT are ignored, so the kernel drops them when they are
		// sent, and what came before is drained once the next attempt
		// is here. They are handled again before its child starts, so
		// the child does not inherit them ignored. They are ignored
		// before the end is told (below), so no cancel sent once the
		// gateway knows of the end can still be on its way to sigs.
		signal.Ignore(unix.SIGTERM, unix.SIGINT)
		body, err := nextFrame(in)
		if err != nil {
			if ran && errors.Is(err, io.EOF) {
				return 0
			}
			return 3
		}
		if ended != nil {
			_ = ended.close()
			ended = nil
		}
		now := time.Now()
		signal.Notify(sigs, unix.SIGTERM, unix.SIGINT)
		for len(sigs) > 0 {
			<-sigs
		}
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
		code := 1
		if selfErr == nil {
			code, ended = attend(h.Dir, self, spec, specErr, now, sigs)
		}
		signal.Ignore(unix.SIGTERM, unix.SIGINT)
		if _, err := os.Stdout.Write([]byte{byte(code)}); err != nil || code != 0 {
			return code
		}
	}
}

// nextFrame reads the next frame (see frame) from r: io.EOF when r ends
// before one starts, errHandoffCut when it ends inside one.
func nextFrame(r *bufio.Reader) ([]byte, error) {
	head, err := r.ReadString('\n')
	if err != nil {
		if head == "" && errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, errHandoffCut
	}
	n, err := strconv.Atoi(strings.TrimSuffix(head, "\n"))
	if err != nil || n < 0 {
		return nil, errors.New("the spec on stdin is not framed as <length>\\n<json>")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, errHandoffCut
	}
	return body, nil
}

// Warm is a shim started before its attempt exists, waiting on a pipe
// for Hand, and again after each attempt it ran. Its process is
// detached as Launch's are; it exits, having started nothing more, when
// the pipe closes: when Discard closes it, or when the process holding
// it dies.
type Warm struct {
	proc *os.Process
	pipe *os.File
	// ended receives one value per attempt whose status the shim
	// recorded: Main's exit code for it.
	ended chan int
	// exited is closed once the process exited and was reaped.
	exited chan struct{}
	close  sync.Once
}

// StartWarm starts exe with args (the lean shim and WarmArg) as a warm
// shim with env as its environment until its first attempt comes.
func StartWarm(exe string, args, env []string) (*Warm, error) {
	r, notice, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("launch %s: pipe for its notices: %w", exe, err)
	}
	p, w, err := start(exe, args, env, true, notice)
	notice.Close() // the shim has its own copy
	if err != nil {
		r.Close()
		return nil, err
	}
	warm := &Warm{proc: p, pipe: w, ended: make(chan int, 1), exited: make(chan struct{})}
	go warm.follow(r)
	return warm, nil
}

// follow passes on the shim's notices, then reaps it once it is gone.
func (w *Warm) follow(r *os.File) {
	defer close(w.exited)
	defer r.Close()
	var b [1]byte
	for {
		if _, err := r.Read(b[:]); err != nil {
			break
		}
		w.ended <- int(b[0])
	}
	_, _ = w.proc.Wait()
}

// Process returns the warm shim's process.
func (w *Warm) Process() *os.Process { return w.proc }

// Ended receives Main's exit code for the attempt last handed, once the
// shim has recorded its status. After a code other than 0 the shim
// exits.
func (w *Warm) Ended() <-chan int { return w.ended }

// Exited is closed once the shim has exited and been reaped.
func (w *Warm) Exited() <-chan struct{} { return w.exited }

// Hand gives the warm shim attempt dir and env, the whole environment
// of the shim with its spec entry (SpecEntry), as Launch takes them, and
// returns the shim's process, which is from then on the attempt's shim,
// until Ended says the attempt's status is recorded; only then may the
// next be handed. When Hand fails (the warm shim is gone), the shim got
// no attempt or one cut short, on which it claims and runs nothing: the
// caller may start another shim for dir; the failed one is discarded.
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
	return w.proc, nil
}

// Discard closes the warm shim's pipe, so that it exits once the attempt
// it runs, if any, is recorded, having started nothing more. Wait for
// that with Exited.
func (w *Warm) Discard() {
	w.close.Do(func() { _ = w.pipe.Close() })
}
