package stored_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// oldRecord is a task record as the gateway wrote it while sdk.Task still
// carried the runner's fields: every one of them set.
const oldRecord = `{
  "id": "t1", "flow_id": "f1", "owner_key": "me", "runtime": "cli",
  "spec": {"argv": ["sleep", "60"]}, "status": "running", "attempts": 2,
  "errors": ["exit status 75"],
  "milestones": [{"seq": 1, "name": "built", "at": "2026-12-01T10:00:05Z"}],
  "in_place_retried": true,
  "milestones_noticed": ["built"],
  "pid": 4711, "pid_start_time": 123456,
  "gateway": "box.4242",
  "shim_pid": 4710, "shim_start_time": 123450,
  "retry_at": "2026-12-01T10:00:01Z",
  "progress_offset": 812, "progress_errors": 3,
  "created_at": "2026-12-01T10:00:00Z", "started_at": "2026-12-01T10:00:02Z",
  "updated_at": "2026-12-01T10:00:06Z"
}`

// A record written before the split loads into a stored.Task with every
// field, the runner's and the public ones, and is written back with the
// same keys and values: no migration, nothing lost.
func TestRecordWrittenBeforeTheSplitLoads(t *testing.T) {
	t.Parallel()
	var task stored.Task
	require.NoError(t, json.Unmarshal([]byte(oldRecord), &task))
	at := func(s string) time.Time { v, err := time.Parse(time.RFC3339, s); require.NoError(t, err); return v }

	require.Equal(t, stored.Task{
		Task: sdk.Task{
			ID: "t1", FlowID: "f1", OwnerKey: "me", Runtime: "cli",
			Spec: sdk.TaskSpec{Argv: []string{"sleep", "60"}}, Status: sdk.TaskRunning, Attempts: 2,
			Errors:     []string{"exit status 75"},
			Milestones: []sdk.Milestone{{Seq: 1, Name: "built", At: at("2026-12-01T10:00:05Z")}},
			RetryAt:    at("2026-12-01T10:00:01Z"),
			CreatedAt:  at("2026-12-01T10:00:00Z"), StartedAt: at("2026-12-01T10:00:02Z"), UpdatedAt: at("2026-12-01T10:00:06Z"),
		},
		PID: 4711, PIDStartTime: 123456, Gateway: "box.4242", ShimPID: 4710, ShimStartTime: 123450,
		InPlaceRetried: true, MilestonesNoticed: []string{"built"},
		ProgressOffset: 812, ProgressErrors: 3,
	}, task)

	again, err := json.Marshal(&task)
	require.NoError(t, err)
	require.JSONEq(t, oldRecord, string(again), "the record is written back as it was read")
}

// What a controller is handed of a stored task carries none of the
// runner's fields, in Go or in JSON, and the record keeps them.
func TestPublicLeavesTheRunnersFieldsOut(t *testing.T) {
	t.Parallel()
	var task stored.Task
	require.NoError(t, json.Unmarshal([]byte(oldRecord), &task))
	pub := task.Public()
	require.Equal(t, task.Task, *pub)
	b, err := json.Marshal(pub)
	require.NoError(t, err)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &keys))
	for _, name := range runnerJSONNames(t) {
		require.NotContains(t, keys, name, "a controller's task carries the runner's field %s", name)
	}
	require.Contains(t, keys, "status")
	require.Equal(t, 4711, task.PID, "the record keeps the runner's fields")

	require.Nil(t, (*stored.Task)(nil).Public())
	require.Equal(t, []*sdk.Task{pub}, stored.Publics([]*stored.Task{&task}))
}

// Every field stored.Task adds is one sdk.Task does not have, by Go name
// and by JSON name, so the two never shadow each other in Go or collide
// in the stored JSON.
func TestRunnerFieldsAreNotOnTheSDKTask(t *testing.T) {
	t.Parallel()
	sdkTask := reflect.TypeFor[sdk.Task]()
	sdkNames := map[string]bool{}
	for i := range sdkTask.NumField() {
		sdkNames[jsonName(sdkTask.Field(i))] = true
	}
	names := runnerJSONNames(t)
	require.Len(t, names, 10, "the runner's fields: pids and start times, member, boot, in-place retry, milestones noticed, progress offset and errors")
	for _, name := range names {
		require.False(t, sdkNames[name], "sdk.Task has %s, which stored.Task adds", name)
	}
	own := reflect.TypeFor[stored.Task]()
	for i := range own.NumField() {
		if f := own.Field(i); !f.Anonymous {
			_, shadows := sdkTask.FieldByName(f.Name)
			require.False(t, shadows, "stored.Task.%s shadows sdk.Task.%s", f.Name, f.Name)
		}
	}
}

// runnerJSONNames lists the JSON names of the fields stored.Task adds to
// sdk.Task.
func runnerJSONNames(t *testing.T) []string {
	t.Helper()
	own := reflect.TypeFor[stored.Task]()
	var out []string
	for i := range own.NumField() {
		if f := own.Field(i); !f.Anonymous {
			out = append(out, jsonName(f))
		}
	}
	return out
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}
