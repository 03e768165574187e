package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/trigger"
)

// The figures of the triggers phase.
const (
	FigTriggerAccept  = "trigger_deliveries"
	FigTriggerLatency = "trigger_post_to_started"
)

// benchTokenEnv is the variable the bench's triggers read their token
// from; the phase sets it in its own process, which is the gateway's.
const benchTokenEnv = "FLOWGATE_BENCH_HOOK_TOKEN"

// hookSenders is how many deliveries are in flight at once in the
// throughput rounds, as a busy sender's connection pool might have.
const hookSenders = 16

// triggers measures webhook deliveries through a gateway's HTTP listener:
// how many per second are answered 202 (each a new flow, durable before
// the answer) by hookSenders senders, against the guarded update rate of
// the same run with many writers; and, one at a time on an idle gateway,
// the time from a POST to the first task of the workflow it starts
// running, p50 per round.
func (r *run) triggers(ctx context.Context) ([]Figure, error) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		return nil, fmt.Errorf("find true: %w", err)
	}
	token := make([]byte, 16)
	_, _ = rand.Read(token) // crypto/rand.Read never fails
	tok := hex.EncodeToString(token)
	if err := os.Setenv(benchTokenEnv, tok); err != nil {
		return nil, err
	}
	defer os.Unsetenv(benchTokenEnv)
	home := filepath.Join(r.tmp, "hooks")
	wf := filepath.Join(mkdir(home), "one.lobster")
	if err := os.WriteFile(wf, []byte("name: one\nsteps:\n  - id: a\n    run: \"true\"\n"), 0o600); err != nil {
		return nil, err
	}
	g, err := r.hookGateway(home)
	if err != nil {
		return nil, err
	}
	bg := context.WithoutCancel(ctx)
	if err := g.Start(bg); err != nil {
		return nil, err
	}
	defer func() { _ = g.Stop(bg) }()
	c := g.Client()
	for _, in := range []apitype.TriggerInput{
		{Name: "accept", Controller: "bench-nobody", TokenEnv: benchTokenEnv},
		{Name: "start", Pipeline: wf, TokenEnv: benchTokenEnv},
	} {
		// Both get more deliveries than the default bucket lets through
		// (the latency ones too, one at a time, at full size): the figures
		// are the gateway's, not the rate limit's.
		in.Rate, in.Burst = 1e9, 1<<30
		if _, err := c.AddTrigger(ctx, in); err != nil {
			return nil, err
		}
	}
	base := "http://" + g.HTTPAddr() + "/hooks/"
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: hookSenders}}
	var seq atomic.Int64
	var rates, lat, direct []float64
	per := max(r.sz.DispatchTasks/10/r.sz.Rounds, 1)
	for range r.sz.Rounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rate, err := store.WritersRate(hookSenders, r.sz.Updates, func(int) error {
			_, err := postHook(ctx, hc, base+"accept", tok, fmt.Sprintf("d%d", seq.Add(1)))
			return err
		})
		if err != nil {
			return nil, err
		}
		var ds, ts []time.Duration
		for range per {
			d, err := postToStarted(ctx, hc, c, base+"start", tok, fmt.Sprintf("s%d", seq.Add(1)))
			if err != nil {
				return nil, err
			}
			t, err := runToStarted(ctx, c, truePath)
			if err != nil {
				return nil, err
			}
			ds, ts = append(ds, d), append(ts, t)
		}
		rates, lat, direct = append(rates, rate), append(lat, medianMs(ds)), append(direct, medianMs(ts))
	}
	return []Figure{
		{Name: FigTriggerAccept, Title: fmt.Sprintf("webhook deliveries answered 202, %d senders", hookSenders),
			Value: median(rates), Unit: "deliveries/s", Rounds: rates,
			Baseline: r.guardedMany, BaselineTitle: "guarded flow update, many writers", BaselineUnit: "updates/s",
			Note: "each a new flow committed with its delivery id before the answer"},
		{Name: FigTriggerLatency, Title: "POST /hooks to the workflow's first task started, one at a time, p50", Value: median(lat), Unit: "ms", Rounds: lat,
			Baseline: median(direct), BaselineTitle: "tasks run of true to its start, same gateway", BaselineUnit: "ms",
			Note: fmt.Sprintf("%d deliveries per round on an idle gateway; each round's p50", per)}}, nil
}

// runToStarted runs one task of true through c and returns the time from
// the call to its start as the gateway recorded it, after its end.
func runToStarted(ctx context.Context, c api.Client, truePath string) (time.Duration, error) {
	t0 := time.Now()
	t, err := runTrue(ctx, c, "direct", truePath)
	if err != nil {
		return 0, err
	}
	if t.StartedAt.IsZero() {
		return 0, fmt.Errorf("task %s ended %s without starting", t.ID, t.Status)
	}
	return t.StartedAt.Sub(t0), nil
}

// hookGateway returns a gateway over home with its HTTP listener on a
// loopback port and the first-party controllers in process, as
// `flowgate gateway --http` runs.
func (r *run) hookGateway(home string) (*gateway.Gateway, error) {
	var fc gateway.FileConfig
	fc.Limits.MaxRunning = r.sz.Concurrency
	fc.HTTP.Addr = "127.0.0.1:0"
	self, log := r.cfg.Self, r.cfg.Logger.Named("bench")
	return gateway.New(gateway.Config{Home: home, File: fc, Owner: "flowgate bench", Self: self,
		Builtins: []string{flows.PipelineController}, Controllers: r.cfg.Controllers, Logger: log, Shims: runner.NewShims(self, log)})
}

// postHook posts an empty delivery with id to url and returns its flow;
// any answer but 202 is an error.
func postHook(ctx context.Context, hc *http.Client, url, token, id string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(`{}`)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Idempotency-Key", id)
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var a trigger.Answer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return "", fmt.Errorf("POST %s: %d, %w", url, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, a.Error)
	}
	return a.FlowID, nil
}

// postToStarted posts one delivery and returns the time from the POST to
// the start of the first task of the flow it started, then waits for the
// flow to end so the next delivery finds the gateway idle.
func postToStarted(ctx context.Context, hc *http.Client, c api.Client, url, token, id string) (time.Duration, error) {
	t0 := time.Now()
	flowID, err := postHook(ctx, hc, url, token, id)
	if err != nil {
		return 0, err
	}
	var started time.Duration
	for {
		changed := c.(api.Changes).Changed()
		v, err := c.ViewFlow(ctx, flowID)
		if err != nil {
			return 0, err
		}
		if started == 0 && len(v.Tasks) > 0 && !v.Tasks[0].StartedAt.IsZero() {
			started = v.Tasks[0].StartedAt.Sub(t0)
		}
		if v.Status.Terminal() {
			if started == 0 {
				return 0, fmt.Errorf("flow %s ended %s without a started task", flowID, v.Status)
			}
			return started, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-changed:
		}
	}
}
