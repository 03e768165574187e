// Package duration holds the JSON duration type of task specs, on its own
// so that the per-task shim can read a spec without linking the rest of
// sdk (gRPC, go-plugin), whose package initialisation every task would
// pay for. Plugin authors use it as sdk.Duration.
package duration

import (
	"encoding/json"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("1m30s"); it also accepts a number of nanoseconds.
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads "1m30s" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*d = Duration(n)
	return nil
}
