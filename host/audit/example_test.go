package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// A queued task that has not moved for a quarter of an hour is a
// stale_queued warning.
func Example() {
	dir, _ := os.MkdirTemp("", "audit")
	defer os.RemoveAll(dir)
	st, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	then := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	eng, _ := engine.New(st, engine.Config{Now: func() time.Time { return then }})
	if _, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "me", Label: "report"}); err != nil {
		panic(err)
	}

	now := func() time.Time { return then.Add(15 * time.Minute) }
	rep, err := audit.Run(context.Background(), audit.Config{Now: now}, audit.Input{Engine: eng})
	if err != nil {
		panic(err)
	}
	for _, f := range rep.Findings {
		fmt.Println(f.Kind, f.Severity, f.Code, *f.AgeMS/1000, "s:", f.Detail)
	}
	fmt.Println("skipped:", rep.Skipped[0].Code)
	// Output:
	// task warn stale_queued 900 s: queued task has not advanced recently
	// skipped: controller_unavailable
}
