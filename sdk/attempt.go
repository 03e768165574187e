package sdk

import "time"

// AttemptTime is when one attempt of a task ran: what a timeline draws.
// The attempt waited queued from the previous attempt's end (the task's
// CreatedAt for the first) until StartedAt.
type AttemptTime struct {
	// Attempt is the attempt's number, the first being 1.
	Attempt   int       `json:"attempt"`
	StartedAt time.Time `json:"started_at"`
	// EndedAt is when the attempt ended, failed and queued again or
	// ended the task; zero while it runs.
	EndedAt time.Time `json:"ended_at,omitzero"`
}
