package runner

// ReadProgress exposes readProgress to the external tests.
var ReadProgress = readProgress

// Held returns how many tasks r holds environment values for.
func (r *Runner) Held() int {
	r.holdMu.RLock()
	defer r.holdMu.RUnlock()
	return len(r.held)
}

// WarmPID returns the pid of the warm shim waiting for the next attempt,
// or 0 when none waits.
func (s *Shims) WarmPID() int {
	s.warm.mu.Lock()
	defer s.warm.mu.Unlock()
	if s.warm.shim == nil {
		return 0
	}
	return s.warm.shim.Process().Pid
}
