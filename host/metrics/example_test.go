package metrics_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/metrics"
)

// A part records into the gateway's Metrics; /metrics serves it in the
// Prometheus text format.
func Example() {
	m := metrics.New(nil)
	m.CronRunEnded("nightly", "ok")
	m.CronRunEnded("nightly", "ok")
	m.CronFired(1500 * time.Millisecond)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "flowgate_cron_runs_total") || strings.HasPrefix(line, "flowgate_cron_fire_lag_seconds_count") {
			fmt.Println(line)
		}
	}
	// Output:
	// flowgate_cron_fire_lag_seconds_count 1
	// flowgate_cron_runs_total{job="nightly",outcome="ok"} 2
}
