package scheduler

import "time"

// Observer hears when cron runs fire and end; the gateway's metrics
// implement it. Its methods run on the scheduler's goroutines and must not
// block.
type Observer interface {
	// CronFired: a scheduled run fired lag after its scheduled time.
	CronFired(lag time.Duration)
	// CronRunEnded: a run of the job named job ended with outcome, a run
	// status (RunOK, RunError, RunSkipped, RunMissed, …). job is empty
	// for a run whose job was deleted before it ended.
	CronRunEnded(job, outcome string)
}

// noObserver is the Observer of a Config that names none.
type noObserver struct{}

func (noObserver) CronFired(time.Duration)     {}
func (noObserver) CronRunEnded(string, string) {}
