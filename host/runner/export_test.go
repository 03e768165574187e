package runner

// ReadProgress exposes readProgress to the external tests.
var ReadProgress = readProgress

// Held returns how many tasks r holds environment values for.
func (r *Runner) Held() int {
	r.holdMu.RLock()
	defer r.holdMu.RUnlock()
	return len(r.held)
}
