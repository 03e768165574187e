package schedule_test

import (
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/schedule"
)

// A daily 02:30 job in Berlin around the spring-forward night: with the
// default shift policy the missing 02:30 runs at 03:00.
func ExampleSchedule_Next() {
	now := time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC)
	s, err := schedule.ParseSchedule(schedule.Flags{Cron: "30 2 * * *", TZ: "Europe/Berlin"}, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	t := now
	for range 3 {
		t = s.Next(t)
		fmt.Println(t.In(berlin).Format("Mon 2006-01-02 15:04 MST"))
	}
	// Output:
	// Sat 2026-03-28 02:30 CET
	// Sun 2026-03-29 03:00 CEST
	// Mon 2026-03-30 02:30 CEST
}

// Validation errors name the flag and the field at fault.
func ExampleParseSchedule() {
	_, err := schedule.ParseSchedule(schedule.Flags{Cron: "0 25 * * *"}, time.Now())
	fmt.Println(err)
	_, err = schedule.ParseSchedule(schedule.Flags{Every: "5m", TZ: "Europe/Berlin"}, time.Now())
	fmt.Println(err)
	// Output:
	// --cron: hour field "25" is invalid: end of range (25) above maximum (23): 25; fields are minute hour day-of-month month day-of-week
	// --tz: cannot be used with --every: an interval is elapsed time and has no time zone
}

// After a day of downtime with a 2h catch-up window, the two most recent
// hourly runs execute, oldest first; the rest are recorded as missed.
func ExamplePlanCatchUp() {
	hourly := schedule.Schedule{Kind: schedule.KindCron, Expr: "0 * * * *"}
	last := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	now := time.Date(2026, 5, 2, 9, 30, 0, 0, time.UTC)
	run, missed := schedule.PlanCatchUp(hourly, last, now, 2*time.Hour)
	for _, t := range run {
		fmt.Println("run", t.Format("01-02 15:04"))
	}
	fmt.Println("missed", len(missed))
	// Output:
	// run 05-02 08:00
	// run 05-02 09:00
	// missed 22
}
