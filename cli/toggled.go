package cli

import "time"

// toggleText says who last enabled or disabled a cron job or trigger,
// and when, for cron show and triggers show; by is empty when nobody was
// named (a cron edit --disabled).
func toggleText(enabled bool, by string, at time.Time) string {
	text := "disabled"
	if enabled {
		text = "enabled"
	}
	if by != "" {
		text += " by " + clean(by)
	}
	return text + " at " + stamp(at)
}
