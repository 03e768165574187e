package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// A file's flow runs one task that counts the file, finishes with the
// count, and moves the file to done/ (in process, then over gRPC: the
// file is dropped again for each).
func TestFileFlow(t *testing.T) {
	dir := t.TempDir()
	sdktest.Run(t, inbox{dir: dir, owner: "me", poll: time.Second}, func(t *testing.T, h *sdktest.Harness) {
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello"), 0o600); err != nil {
			t.Fatal(err)
		}
		f := h.StartFlow("process a.txt", file{Name: "a.txt", SHA256: "x"})
		tasks := h.Tasks(f.ID)
		if len(tasks) != 1 || tasks[0].Spec.Argv[2] != filepath.Join(dir, "a.txt") {
			t.Fatalf("tasks are %+v", tasks)
		}
		h.FinishTask(tasks[0].ID, sdk.TaskSucceeded, sdktest.Stdout("5 "+filepath.Join(dir, "a.txt")+"\n"))
		f = h.Flow(f.ID)
		var st file
		if err := json.Unmarshal(f.State, &st); err != nil || f.Status != sdk.FlowSucceeded || st.Count == "" {
			t.Fatalf("flow is %s with state %s (%v)", f.Status, f.State, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "done", "a.txt")); err != nil {
			t.Fatalf("the file was not moved to done/: %v", err)
		}
	})
}

// A flow someone else started for inbox, with no file, fails saying why.
func TestFlowWithoutAFileFails(t *testing.T) {
	h := sdktest.New(t, inbox{dir: t.TempDir(), owner: "me", poll: time.Second})
	f := h.Flow(h.StartFlow("not a file", nil).ID)
	if f.Status != sdk.FlowFailed || f.BlockedSummary == "" {
		t.Fatalf("flow is %s (%s)", f.Status, f.BlockedSummary)
	}
}
