package apitype

// The limits the engine sets on what the API is asked, so that a command
// can refuse a flag with its own words before it asks. They are the
// engine's numbers (package api's tests fail when the two part); the
// gateway enforces the engine's either way.
const (
	// MaxAttempts is the most attempts one task may have.
	MaxAttempts = 100
	// MaxNotifyTo is the most destinations one flow's notices may go to,
	// and MaxNotifyTemplate the most bytes of its notice template.
	MaxNotifyTo       = 16
	MaxNotifyTemplate = 16 << 10
	// MaxHistoryPage is the most entries one History call returns.
	MaxHistoryPage = 1000
)
