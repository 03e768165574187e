package apitype

import "time"

// DamagedRecord is a stored record that cannot be read, or decodes to one
// the engine never writes; listings skip it and report it here.
type DamagedRecord struct {
	// Key is the record's key, e.g. "flow/<id>".
	Key string `json:"key"`
	// Reason says what is wrong with it.
	Reason string `json:"reason"`
}

// Quarantined is one record in the quarantine (see api.CheckReport).
type Quarantined struct {
	// Key is where the record was, e.g. "flow/<id>".
	Key string `json:"key"`
	// Reason is why it was moved (DamagedRecord.Reason).
	Reason string `json:"reason"`
	// At is when it was moved.
	At time.Time `json:"quarantined_at"`
	// Value is the record's bytes as they were (base64 in JSON).
	Value []byte `json:"value"`
	// DroppedEvents counts the undelivered events of a quarantined flow,
	// deleted with it.
	DroppedEvents int `json:"dropped_events,omitempty"`
}
