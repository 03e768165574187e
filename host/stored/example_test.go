package stored_test

import (
	"encoding/json"
	"fmt"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The gateway keeps the runner's fields in the record and hands a
// controller the public task only.
func ExampleTask_Public() {
	rec := &stored.Task{Task: sdk.Task{ID: "t1", Status: sdk.TaskRunning}, PID: 4711}
	kept, _ := json.Marshal(rec)
	public, _ := json.Marshal(rec.Public())
	fmt.Println(string(kept))
	fmt.Println(string(public))
	// Output:
	// {"id":"t1","flow_id":"","owner_key":"","runtime":"","spec":{},"status":"running","attempts":0,"created_at":"0001-01-01T00:00:00Z","updated_at":"0001-01-01T00:00:00Z","pid":4711}
	// {"id":"t1","flow_id":"","owner_key":"","runtime":"","spec":{},"status":"running","attempts":0,"created_at":"0001-01-01T00:00:00Z","updated_at":"0001-01-01T00:00:00Z"}
}
