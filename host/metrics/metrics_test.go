package metrics_test

import (
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/metrics"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// A source that fails to answer leaves its metric out of the scrape; the
// counts that can be read are still served, zero statuses included, and
// two Metrics share nothing.
func TestScrapeServesWhatItCanRead(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	_, _, err = eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)

	m := metrics.New(nil)
	require.NoError(t, m.Register(metrics.Sources{Engine: eng, Space: func() (store.Space, error) { return store.Space{}, errors.New("disk gone") },
		Writer: st.Writer}))
	require.Error(t, m.Register(metrics.Sources{Engine: eng}), "the counts are registered once")
	other := metrics.New(nil)
	other.TaskStarted(0)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, rec.Code)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	require.NoError(t, err)
	require.NotContains(t, fams, "flowgate_store_file_bytes", "a failed source is left out")
	require.Len(t, fams["flowgate_tasks"].GetMetric(), len(sdk.TaskStatuses()), "every status, zero included")
	w := st.Writer()
	require.Positive(t, w.Commits, "the task's creation committed")
	require.Equal(t, float64(w.Commits), fams["flowgate_store_commits_total"].GetMetric()[0].GetCounter().GetValue())
	require.Positive(t, fams["flowgate_store_writer_busy_seconds_total"].GetMetric()[0].GetCounter().GetValue(), "the commit took time")
	require.Len(t, fams["flowgate_flows"].GetMetric(), len(sdk.FlowStatuses()))
	require.Zero(t, fams["flowgate_task_start_latency_seconds"].GetMetric()[0].GetHistogram().GetSampleCount(), "the other Metrics' observation is its own")
}
