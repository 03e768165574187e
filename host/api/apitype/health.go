package apitype

import "time"

// WriteHealth says whether a gateway's store (or its task files) takes
// writes, as GatewayStatus reports it. Writable is false from a failed
// commit until the next one succeeds; LastError is kept after writes
// resume; Failures counts the commits that failed since the last that
// succeeded, Attempts every commit tried since the store was opened.
type WriteHealth struct {
	Writable    bool      `json:"writable"`
	DiskFull    bool      `json:"disk_full,omitempty"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	LastWriteAt time.Time `json:"last_write_at,omitzero"`
	Failures    int64     `json:"failures,omitempty"`
	Attempts    int64     `json:"attempts"`
}

// Problem is the one-line reason that what (the store, task files)
// cannot be written, or "" when it can.
func (h WriteHealth) Problem(what string) string {
	switch {
	case h.Writable:
		return ""
	case h.DiskFull:
		return what + " not writable: disk full; free space on its disk and writes resume by themselves"
	default:
		return what + " not writable: " + h.LastError + "; writes resume by themselves once the cause is fixed"
	}
}
