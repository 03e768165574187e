package sdk_test

import (
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// runnerFields are the fields the gateway keeps on a task for itself
// (host/stored.Task), by Go name and JSON name. They were on sdk.Task
// once; a change to the runner must never again be a change to the
// protocol.
var runnerFields = map[string]string{
	"PID":               "pid",
	"PIDStartTime":      "pid_start_time",
	"ShimPID":           "shim_pid",
	"ShimStartTime":     "shim_start_time",
	"Gateway":           "gateway",
	"InPlaceRetried":    "in_place_retried",
	"MilestonesNoticed": "milestones_noticed",
	"ProgressOffset":    "progress_offset",
	"ProgressErrors":    "progress_errors",
}

// go doc ./sdk Task, what a plugin author reads, shows none of the
// runner's fields, and neither does the type itself (nor its JSON).
func TestTaskShowsNoRunnerField(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	out, err := exec.Command(goTool, "doc", ".", "Task").CombinedOutput()
	require.NoError(t, err, "go doc ./sdk Task: %s", out)
	doc := string(out)
	require.Contains(t, doc, "type Task struct {", "go doc printed the type")
	require.Contains(t, doc, `json:"status"`, "go doc printed the fields")
	for name, tag := range runnerFields {
		field := regexp.MustCompile(`(?m)^\s+` + name + `\s`)
		require.False(t, field.MatchString(doc), "go doc ./sdk Task shows the runner's field %s; it belongs on host/stored.Task", name)
		require.NotContains(t, doc, `json:"`+tag+`"`, "go doc ./sdk Task shows the runner's field %s", tag)
		require.NotContains(t, doc, `json:"`+tag+`,`, "go doc ./sdk Task shows the runner's field %s", tag)
	}

	typ := reflect.TypeFor[sdk.Task]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		_, byName := runnerFields[f.Name]
		require.False(t, byName, "sdk.Task has the runner's field %s", f.Name)
		for _, runner := range runnerFields {
			require.NotEqual(t, runner, tag, "sdk.Task field %s has the runner's JSON name %q", f.Name, tag)
		}
	}
}
