package scheduler_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
)

// Add a weekday job and read its first run; a second job with the same
// name is refused.
func ExampleJobs_Add() {
	dir, _ := os.MkdirTemp("", "jobs")
	defer os.RemoveAll(dir)
	st, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2026, 6, 5, 12, 0, 0, 0, time.UTC) // a Friday
	js := scheduler.NewJobs(eng, scheduler.JobsConfig{Now: func() time.Time { return now }})

	in := scheduler.JobInput{Name: "standup", Schedule: schedule.Flags{Cron: "0 9 * * 1-5", TZ: "Europe/Paris", Exact: true}, Command: "notify standup"}
	j, err := js.Add(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(j.State.NextRun.UTC().Format(time.RFC3339))
	_, err = js.Add(in)
	fmt.Println(err != nil)
	// Output:
	// 2026-06-08T07:00:00Z
	// true
}
