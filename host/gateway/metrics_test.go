package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// startConfigured starts a gateway with fc on a new home, polling
// tasks often, and returns it with a client on its socket and the home.
func startConfigured(t *testing.T, fc gateway.FileConfig) (*gateway.Gateway, api.Client, string) {
	t.Helper()
	home, err := os.MkdirTemp("", "fggw") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	g, err := gateway.New(gateway.Config{Home: home, File: fc, Launch: testLaunch, Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { _ = g.Stop(ctx) })
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return g, c, home
}

// startHTTPGateway starts a test gateway with http as its TCP listener.
func startHTTPGateway(t *testing.T, http gateway.HTTPConfig) (*gateway.Gateway, api.Client, string) {
	t.Helper()
	var fc gateway.FileConfig
	fc.HTTP = http
	return startConfigured(t, fc)
}

// scrape fetches /metrics with client from url and parses it with the
// Prometheus text parser.
func scrape(t *testing.T, client *http.Client, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// byLabel returns family's values by the value of its label.
func byLabel(t *testing.T, fams map[string]*dto.MetricFamily, family, label string) map[string]int {
	t.Helper()
	f, ok := fams[family]
	require.True(t, ok, "%s is served", family)
	out := map[string]int{}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out[l.GetValue()] = int(m.GetGauge().GetValue())
			}
		}
	}
	return out
}

// gauge returns the value of a gauge without labels.
func gauge(t *testing.T, fams map[string]*dto.MetricFamily, family string) float64 {
	t.Helper()
	f, ok := fams[family]
	require.True(t, ok, "%s is served", family)
	return f.GetMetric()[0].GetGauge().GetValue()
}

// histogramCount returns how many observations family holds in all.
func histogramCount(fams map[string]*dto.MetricFamily, family string) uint64 {
	var n uint64
	for _, m := range fams[family].GetMetric() {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

// After real work, /metrics on the TCP listener and on the socket parse
// with the Prometheus text parser, and their counts by status are the
// store's: the engine's counts of flows and tasks, and the open gates.
// The recorded histograms saw the tasks start and end and the store
// commit.
func TestMetricsMatchTheStore(t *testing.T) {
	t.Parallel()
	g, c, home := startHTTPGateway(t, gateway.HTTPConfig{Addr: "127.0.0.1:0"})
	ctx := context.Background()

	var ids []string
	for i, shell := range []string{"true", "exit 3", "true"} {
		task, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: fmt.Sprint("m", i), Spec: sdk.TaskSpec{Shell: shell}})
		require.NoError(t, err)
		ids = append(ids, task.ID)
	}
	for _, id := range ids {
		waitEnded(t, c, id)
	}
	f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{SyncMode: sdk.SyncManaged, OwnerKey: "gated", ControllerID: "absent", Goal: "wait for me", AllowUnknownController: true})
	require.NoError(t, err)
	_, err = c.UpdateFlow(ctx, f.ID, f.Revision, apitype.FlowPatch{Status: sdk.FlowWaiting,
		Wait: json.RawMessage(`{"kind":"approval","prompt":"ok?"}`)})
	require.NoError(t, err)

	st, err := c.Status(ctx)
	require.NoError(t, err)
	gates, err := c.OpenGates(ctx, apitype.GateFilter{})
	require.NoError(t, err)
	require.Len(t, gates, 1)

	for name, fams := range map[string]map[string]*dto.MetricFamily{
		"tcp":    scrape(t, http.DefaultClient, "http://"+g.HTTPAddr()+"/metrics"),
		"socket": scrape(t, unixClient(home), "http://gateway/metrics"),
	} {
		tasks := byLabel(t, fams, "flowgate_tasks", "status")
		for _, s := range sdk.TaskStatuses() {
			require.Equal(t, st.Tasks[s], tasks[string(s)], "%s: tasks %s", name, s)
		}
		flows := byLabel(t, fams, "flowgate_flows", "status")
		for _, s := range sdk.FlowStatuses() {
			require.Equal(t, st.Flows[s], flows[string(s)], "%s: flows %s", name, s)
		}
		require.Equal(t, 2, tasks["succeeded"], name)
		require.Equal(t, 1, tasks["failed"], name)
		require.Equal(t, 1, flows["waiting"], name)
		require.Equal(t, float64(len(gates)), gauge(t, fams, "flowgate_gates_open"), name)
		require.Greater(t, gauge(t, fams, "flowgate_gate_oldest_age_seconds"), 0.0, name)
		require.Equal(t, float64(st.MaxRunning), gauge(t, fams, "flowgate_tasks_max_running"), name)
		require.Greater(t, gauge(t, fams, "flowgate_store_file_bytes"), 0.0, name)
		require.Equal(t, uint64(3), histogramCount(fams, "flowgate_task_start_latency_seconds"), name)
		require.Equal(t, uint64(3), histogramCount(fams, "flowgate_task_run_seconds"), name)
		require.Positive(t, histogramCount(fams, "flowgate_store_commit_seconds"), name)
	}
}

// unixClient is an HTTP client that reaches the gateway of home over its
// socket.
func unixClient(home string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", gateway.SocketPath(home))
	}}}
}

// A controller's acknowledged events show in its event lag, and a plugin
// killed once shows one restart, as the supervisor counts them.
func TestMetricsSeeControllersAndRestarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, home := newTestGateway(t, 10, "", testPlugin("stepper", "stepper", map[string]string{"FLOWGATE_TEST_MARKERS": t.TempDir()}))
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: "stepper", Goal: "measured", OwnerKey: "me"})
	require.NoError(t, err)
	waitFlow(t, c, f.ID, "the flow to end", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.NoError(t, syscall.Kill(pluginStatus(t, c, "stepper").PID, syscall.SIGKILL))
	polltest.Until(t, "the plugin to be restarted", func() bool {
		p := pluginStatus(t, c, "stepper")
		return p.Restarts >= 1 && p.State == apitype.PluginRunning
	}, polltest.Explain(func() string { return fmt.Sprintf("%+v", pluginStatus(t, c, "stepper")) }))

	fams := scrape(t, unixClient(home), "http://gateway/metrics")
	restarts := fams["flowgate_plugin_restarts_total"].GetMetric()
	require.Len(t, restarts, 1)
	require.Equal(t, "stepper", restarts[0].GetLabel()[0].GetValue())
	require.Equal(t, float64(pluginStatus(t, c, "stepper").Restarts), restarts[0].GetCounter().GetValue())
	require.Positive(t, histogramCount(fams, "flowgate_event_lag_seconds"), "the flow's events were acknowledged")
}
