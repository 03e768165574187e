package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// keepInBackground runs keep for in in a goroutine that Stop, or a
// Reload, ends. It reports false, and runs nothing, when the supervisor is
// stopped.
func (s *Supervisor) keepInBackground(in *instance, first chan<- error) bool {
	kctx, cancel := context.WithCancel(context.Background())
	kept := make(chan struct{})
	in.mu.Lock()
	in.stopKeeping, in.kept = cancel, kept
	in.mu.Unlock()
	ok := s.life.Go(func(ctx context.Context) {
		defer close(kept)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		s.keep(kctx, in, first)
	})
	if !ok {
		cancel()
		close(kept)
	}
	return ok
}

// Reload replaces the process of the plugin name with a new one, as after
// a rebuild of its executable: it checks the entry's path and sha256 (a
// mistake fails Reload with a *ConfigError and leaves the running process
// alone), shuts the running process down (as Stop does), resets the
// plugin's restart count, restart budget and last error, and launches it
// again, checking its handshake and name as at start. It
// returns once the new process runs, or with the reason it could not start
// (a *ConfigError for a config mistake); the plugin is then kept and
// retried as after any failed start. It also brings back a plugin left
// failed. Events the old process was handling are delivered again, and a
// plugin that is reloading does not count against them. An unknown name
// fails with an error matching sdk.ErrNotFound that lists the configured
// plugins.
func (s *Supervisor) Reload(ctx context.Context, name string) (Status, error) {
	in := s.instances[name]
	if _, inProcess := s.inProcess[name]; inProcess {
		return s.Status(name), fmt.Errorf("%w: controller %s runs inside the gateway's process, so it has no process to reload; restart the gateway to load a new flowgate, or set isolate: true on its plugins: entry to run it as a plugin process", sdk.ErrInvalid, name)
	}
	if in == nil {
		return Status{}, fmt.Errorf("%w: no plugin named %q is configured in this gateway (it has %s); check the name with flowgate plugins list", sdk.ErrNotFound, name, s.namesText())
	}
	// A mistake found now leaves the running process alone.
	if err := in.spec.checkFile(); err != nil {
		return s.Status(name), err
	}
	in.reloadMu.Lock()
	defer in.reloadMu.Unlock()
	in.mu.Lock()
	stop, kept := in.stopKeeping, in.kept
	in.reloading = true
	in.mu.Unlock()
	defer func() {
		in.mu.Lock()
		in.reloading = false
		in.mu.Unlock()
	}()
	if stop != nil {
		stop()
		select {
		case <-kept:
		case <-ctx.Done():
			return s.Status(name), fmt.Errorf("reload plugin %s: its process did not stop in time: %w", name, ctx.Err())
		}
	}
	in.mu.Lock()
	in.restarts, in.starts, in.lastError = 0, nil, ""
	in.mu.Unlock()
	first := make(chan error, 1)
	if !s.keepInBackground(in, first) {
		return s.Status(name), errors.New("reload plugin " + name + ": the gateway is stopping")
	}
	select {
	case err := <-first:
		return s.Status(name), err
	case <-ctx.Done():
		return s.Status(name), fmt.Errorf("reload plugin %s: %w (it is still starting; see flowgate plugins list)", name, ctx.Err())
	}
}

// Names lists the controllers the supervisor runs, as plugins or in this
// process (SupervisorConfig.InProcess), sorted.
func (s *Supervisor) Names() []string {
	out := make([]string, 0, len(s.instances)+len(s.inProcess))
	for name := range s.instances {
		out = append(out, name)
	}
	for name := range s.inProcess {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// namesText is Names for a message: "a, b" or "no plugins".
func (s *Supervisor) namesText() string {
	if len(s.instances) == 0 {
		return "no plugins"
	}
	return strings.Join(s.Names(), ", ")
}

// Status is the status of the plugin name, as Statuses lists it; a name
// it does not list has a Status with only its Name set.
func (s *Supervisor) Status(name string) Status {
	for _, st := range s.Statuses() {
		if st.Name == name {
			return st
		}
	}
	return Status{Name: name}
}
