package runcenter_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/stretchr/testify/require"
)

// timeElement is a time as the server draws it: UTC in the datetime, in
// the hover title and in the text.
var timeElement = regexp.MustCompile(`<time datetime="(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)" title="(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC">(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)Z</time>`)

// With JavaScript off every time reads in UTC, and says so on hover; the
// cron page says each job's schedule in its own terms: the zone of a
// --cron job, the interval of an --every job, and the stagger offset.
func TestTimesAreUTCAndCronJobsSayTheirZoneAndInterval(t *testing.T) {
	t.Parallel()
	s := startSite(t)
	ctx := context.Background()
	every, err := s.c.AddJob(ctx, apitype.CronJobInput{Name: "often", Schedule: apitype.ScheduleFlags{Every: "15m"}, Command: "echo hi"})
	require.NoError(t, err)
	_, err = s.c.AddJob(ctx, apitype.CronJobInput{Name: "berlin", Schedule: apitype.ScheduleFlags{Cron: "30 3 * * *", TZ: "Europe/Berlin"}, Command: "echo hi"})
	require.NoError(t, err)
	staggered, err := s.c.AddJob(ctx, apitype.CronJobInput{Name: "hourly", Schedule: apitype.ScheduleFlags{Cron: "0 * * * *", Stagger: "10m"}, Command: "echo hi"})
	require.NoError(t, err)
	_, off := api.CronStagger(staggered)
	require.Positive(t, off, "the job's id picks an offset in its window")

	page := s.get("/cron", "")
	require.Contains(t, page, `<td class="schedule">every 15m</td>`)
	require.Contains(t, page, `<td class="schedule">30 3 * * * in Europe/Berlin</td>`)
	shown := off.String()
	if strings.HasSuffix(shown, "m0s") {
		shown = strings.TrimSuffix(shown, "0s")
	}
	require.Contains(t, page, `<td class="schedule">0 * * * * in UTC, staggered `+shown+` later`)
	require.Contains(t, s.get("/cron/"+every.ID, ""), `<dd class="schedule">every 15m</dd>`)

	times := timeElement.FindAllStringSubmatch(page, -1)
	require.NotEmpty(t, times, "the next runs are <time> elements")
	next := every.State.NextRun.UTC()
	found := false
	for _, m := range times {
		require.Equal(t, m[2], m[3], "the hover says the same instant in UTC")
		require.Equal(t, m[1][:10]+" "+m[1][11:19], m[3], "the datetime is the same instant")
		found = found || m[1] == next.Format("2006-01-02T15:04:05Z")
	}
	require.True(t, found, "the every job's next run %s is among the times", next)
}
