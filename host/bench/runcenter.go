package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// FigRunCenterList is the run center's flow list, its first page, over
// the big home.
const FigRunCenterList = "run_center_first_page"

// runCenter measures the run center's flow list as a browser asks it
// (GET / over the gateway's HTTP listener on loopback, read to the end)
// over the big home, against the same page over the small one, in
// interleaved rounds. It checks that each page counts every flow.
func (r *run) runCenter(ctx context.Context) ([]Figure, error) {
	type site struct {
		n   int
		url string
	}
	var sites []site
	bg := context.WithoutCancel(ctx)
	for _, h := range []struct {
		name string
		n    int
	}{{smallHome, r.sz.Flows / 100}, {bigHome, r.sz.Flows}} {
		g, err := r.hookGateway(filepath.Join(r.tmp, h.name))
		if err != nil {
			return nil, err
		}
		if err := g.Start(bg); err != nil {
			return nil, err
		}
		defer func() { _ = g.Stop(bg) }()
		sites = append(sites, site{h.n, "http://" + g.HTTPAddr() + "/"})
	}
	hc := &http.Client{}
	page := func(s site) (time.Duration, error) {
		t0 := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
		if err != nil {
			return 0, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("GET %s: %d %.200s", s.url, resp.StatusCode, body)
		}
		if total := fmt.Sprintf(" %d total", s.n); !strings.Contains(string(body), total) {
			return 0, fmt.Errorf("GET %s: the page does not count %d flows", s.url, s.n)
		}
		return d, nil
	}
	for _, s := range sites { // untimed: the store's pages into the cache
		if _, err := page(s); err != nil {
			return nil, err
		}
	}
	var rounds [2][]float64 // by site, each round's median in ms
	for range r.sz.Rounds {
		for i, s := range sites {
			var ds []time.Duration
			for range r.sz.ListCalls {
				d, err := page(s)
				if err != nil {
					return nil, err
				}
				ds = append(ds, d)
			}
			rounds[i] = append(rounds[i], medianMs(ds))
		}
	}
	return []Figure{{Name: FigRunCenterList, Title: fmt.Sprintf("run center flow list, first page, over %s flows", thousands(int64(r.sz.Flows))),
		Value: median(rounds[1]), Unit: "ms", Rounds: rounds[1],
		Baseline: median(rounds[0]), BaselineTitle: fmt.Sprintf("same over %s flows", thousands(int64(r.sz.Flows/100))), BaselineUnit: "ms",
		Target: &Target{Of: "value", Op: "<", Limit: 50}, Note: "GET / over the gateway's HTTP listener on loopback, read to the end"}}, nil
}
