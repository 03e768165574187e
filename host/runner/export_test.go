package runner

// ReadProgress exposes readProgress to the external tests.
var ReadProgress = readProgress
