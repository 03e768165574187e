package runner

// ReadProgress exposes readProgress to the external tests.
var ReadProgress = readProgress

// RecordReads returns how many attempt records r's supervision read.
func (r *Runner) RecordReads() int64 { return r.recordReads.Load() }

// Held returns how many tasks r holds environment values for.
func (r *Runner) Held() int {
	r.holdMu.RLock()
	defer r.holdMu.RUnlock()
	return len(r.held)
}

// IdlePIDs returns the pids of the idle shims of the pool, the most
// recently used last.
func (s *Shims) IdlePIDs() []int {
	s.warm.mu.Lock()
	defer s.warm.mu.Unlock()
	var pids []int
	for _, i := range s.warm.idle {
		pids = append(pids, i.w.Process().Pid)
	}
	return pids
}
