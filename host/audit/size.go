package audit

import (
	"encoding/json"
	"fmt"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// nearLimit describes a record (a task or a flow, as decoded) whose stored
// form is engine.NearSizeLimit bytes or more, or returns "". The engine
// stores records as their JSON encoding, so this is the stored size.
func nearLimit(record any) string {
	b, err := json.Marshal(record)
	if err != nil || len(b) < engine.NearSizeLimit {
		return ""
	}
	return fmt.Sprintf("record is %d bytes, near the store's limit of %d per record", len(b), store.MaxValueSize)
}
