package pipeline

// StateScope is the directory, under the state directory, of the keys of
// workflow file (stateScope), for tests that store a value beforehand.
func StateScope(file string) string { return (&run{st: &state{File: file}}).stateScope() }
