package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/sdk"
)

// keep runs one plugin until ctx ends: launch, wait for it to exit,
// back off, launch again, within the restart budget. When first is not
// nil, the outcome of the first launch is sent on it: nil once the plugin
// runs, else the error, once the state says what comes next (backoff, or
// failed).
func (s *Supervisor) keep(ctx context.Context, in *instance, first chan<- error) {
	log := s.pluginLog(in)
	var err error
	defer func() {
		if first != nil {
			first <- err
		}
	}()
	for n := 0; ; n++ {
		started := time.Now()
		if err = s.launch(ctx, in, log); err == nil {
			if first != nil {
				first <- nil
				first = nil
			}
			err = s.wait(ctx, in)
		}
		if time.Since(started) > s.cfg.MaxBackoff {
			n = 0 // it ran well for a while: back off from the start again
		}
		if ctx.Err() != nil {
			in.shutdown(s.cfg.ShutdownTimeout, log)
			in.set(StateStopped, "")
			return
		}
		in.kill()
		var permanent *permanentError
		if errors.As(err, &permanent) {
			log.Error("plugin failed; not restarting", "error", err)
			in.fail(StateFailed, err, err.Error())
			return
		}
		if !in.allowRestart(s.cfg.RestartBudget, s.cfg.RestartWindow) {
			log.Error("plugin restart budget spent; giving up", "error", err, "budget", s.cfg.RestartBudget, "window", s.cfg.RestartWindow)
			in.fail(StateFailed, err, fmt.Sprintf("%v (restarted %d times within %s; giving up)", err, s.cfg.RestartBudget, s.cfg.RestartWindow))
			return
		}
		delay := backoff(s.cfg.Backoff, s.cfg.MaxBackoff, n+1)
		log.Warn("plugin down; restarting", "error", err, "in", delay)
		in.fail(StateBackoff, err, err.Error())
		if first != nil {
			first <- err
			first = nil
		}
		select {
		case <-ctx.Done():
			in.set(StateStopped, "")
			return
		case <-time.After(delay):
		}
		in.mu.Lock()
		in.restarts++
		in.mu.Unlock()
	}
}

// allowRestart records a restart and reports whether the budget allows
// it.
func (in *instance) allowRestart(budget int, window time.Duration) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	now := time.Now()
	kept := in.starts[:0]
	for _, t := range in.starts {
		if now.Sub(t) < window {
			kept = append(kept, t)
		}
	}
	in.starts = append(kept, now)
	return len(in.starts) <= budget
}

// permanentError is a launch failure that a restart cannot fix. One that
// wraps a *ConfigError is a mistake in the gateway config, which fails
// Start.
type permanentError struct {
	err error
}

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// launch starts a new instance of in's plugin and connects to it.
func (s *Supervisor) launch(ctx context.Context, in *instance, log hclog.Logger) error {
	epoch := s.epochs.Add(1)
	in.mu.Lock()
	in.state, in.epoch, in.since, in.conn, in.pid = StateStarting, epoch, time.Now(), nil, 0
	in.mu.Unlock()

	var h sdk.Host = &host{eng: s.eng, name: in.spec.Name, epoch: epoch, live: in.live, log: logTo(log), stages: s}
	if s.cfg.WrapHost != nil {
		h = s.cfg.WrapHost(in.spec.Name, h)
	}
	client, conn, info, err := s.dial(ctx, in, log, h)
	if err != nil {
		return err
	}
	// The process is in's from here, so that a failed check below kills
	// it (keep kills the instance after a failed launch).
	in.mu.Lock()
	in.client = client
	if rc := client.ReattachConfig(); rc != nil {
		in.pid = rc.Pid
	}
	in.mu.Unlock()
	// Checked and recorded under stagesMu, so that two plugins starting
	// at once cannot both claim a stage.
	s.stagesMu.Lock()
	defer s.stagesMu.Unlock()
	if err := s.checkStages(in.spec, info); err != nil {
		return err
	}
	in.mu.Lock()
	in.conn, in.info, in.state, in.since = conn, info, StateRunning, time.Now()
	in.watchFailed = make(chan error, 1)
	in.watch = ""
	if info.Watch {
		in.watch = "running"
	}
	in.mu.Unlock()
	log.Info("plugin running", "version", info.Version, "pid", in.pid, "epoch", epoch)
	if info.Watch {
		go s.watch(ctx, in, conn, epoch, log)
	}
	return nil
}

// wait returns when the instance's process exits, its Watch fails, or
// ctx ends.
func (s *Supervisor) wait(ctx context.Context, in *instance) error {
	in.mu.Lock()
	client, watchFailed := in.client, in.watchFailed
	in.mu.Unlock()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-watchFailed:
			return err
		case <-t.C:
			if client.Exited() {
				return errors.New("the plugin process exited")
			}
		}
	}
}

// shutdown asks the instance to stop, waiting at most timeout, then kills
// it.
func (in *instance) shutdown(timeout time.Duration, log hclog.Logger) {
	in.mu.Lock()
	conn := in.conn
	in.mu.Unlock()
	if conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		if err := conn.Shutdown(ctx); err != nil {
			log.Debug("plugin shutdown", "error", err)
		}
		cancel()
	}
	in.kill()
}

// kill ends the instance's process and its process group.
func (in *instance) kill() {
	in.mu.Lock()
	client, pid := in.client, in.pid
	in.client, in.conn, in.watch = nil, nil, ""
	in.mu.Unlock()
	if client != nil {
		client.Kill()
	}
	if pid > 1 {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // anything the plugin left in its group
	}
}

// logWriter forwards a plugin's stray stdout or stderr lines to its log.
type logWriter struct {
	log    hclog.Logger
	stream string
}

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Warn("plugin wrote to "+w.stream, "text", string(p))
	return len(p), nil
}
