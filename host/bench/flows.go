package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/flowgate/flowgate/host/engine"
)

// The homes of the list and restart figures, in the scratch directory:
// one with Sizes.Flows flows, its baseline with a hundredth of them, and
// an empty one.
const (
	bigHome   = "home"
	smallHome = "small"
	emptyHome = "empty"
)

// populate creates Sizes.Flows flows in the big home and Sizes.Flows/100
// in the small one, with Sizes.Writers writers sharing commits. Each flow
// is a finished one, as most of a long-lived home's are: created, its
// flow.started event acknowledged, and finished (three commits).
func (r *run) populate(ctx context.Context) ([]Figure, error) {
	for _, h := range []struct {
		name string
		n    int
	}{{smallHome, r.sz.Flows / 100}, {bigHome, r.sz.Flows}} {
		if err := r.fill(ctx, filepath.Join(r.tmp, h.name), h.n); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// fill creates n finished flows in the store of home.
func (r *run) fill(ctx context.Context, home string, n int) error {
	st, eng, err := openEngine(mkdir(home))
	if err != nil {
		return err
	}
	defer st.Close()
	var done atomic.Int64
	stop := make(chan struct{})
	go func() { // a progress line every 10 seconds
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				d := done.Load()
				left := time.Duration(float64(time.Since(start)) * float64(int64(n)-d) / float64(max(d, 1)))
				r.progress("      %s of %s flows created; about %s left", thousands(d), thousands(int64(n)), round(left))
			}
		}
	}()
	defer close(stop)
	return parallel(ctx, n, r.sz.Writers, func() error {
		if err := finishedFlow(eng); err != nil {
			return err
		}
		done.Add(1)
		return nil
	})
}

// finishedFlow creates a flow, acknowledges its flow.started event and
// finishes it.
func finishedFlow(eng *engine.Engine) error {
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "bench", ControllerID: "bench", Goal: "a finished flow", State: benchState})
	if err != nil {
		return err
	}
	if err := eng.AckEvent(f.ID, 1); err != nil {
		return err
	}
	_, err = eng.Finish(f.ID, f.Revision, engine.EndInput{})
	return err
}

// list measures tasks flow list as the CLI makes it (ViewFlows with the
// CLI's default limit, listPage, then CountFlows), and the same with
// --limit 0 (every flow), over the big home, against the same calls over
// the small home, in interleaved rounds. It checks what each list
// returns.
func (r *run) list(ctx context.Context) ([]Figure, error) {
	type home struct {
		n   int
		eng *engine.Engine
	}
	var homes []home
	for _, h := range []struct {
		name string
		n    int
	}{{smallHome, r.sz.Flows / 100}, {bigHome, r.sz.Flows}} {
		st, eng, err := openEngine(filepath.Join(r.tmp, h.name))
		if err != nil {
			return nil, err
		}
		defer st.Close()
		homes = append(homes, home{h.n, eng})
	}
	// cliList is what flowgate tasks flow list asks the engine, limit 0
	// listing every flow; it returns how long that took.
	cliList := func(h home, limit int) (time.Duration, error) {
		t0 := time.Now()
		page, err := h.eng.ViewFlows(engine.FlowFilter{Limit: limit})
		if err != nil {
			return 0, err
		}
		counts, err := h.eng.CountFlows()
		d := time.Since(t0)
		if err != nil {
			return 0, err
		}
		want := h.n
		if limit > 0 {
			want = min(limit, h.n)
		}
		if len(page.Flows) != want || counts.Total != h.n {
			return 0, fmt.Errorf("the list returned %d flows of %d counted; want %d of %d", len(page.Flows), counts.Total, want, h.n)
		}
		return d, nil
	}
	for _, h := range homes { // untimed: the store's pages into the cache
		if _, err := cliList(h, 0); err != nil {
			return nil, err
		}
	}
	// rounds[limit == 0][home] holds each round's median in ms.
	var rounds [2][2][]float64
	for range r.sz.Rounds {
		for li, limit := range []int{listPage, 0} {
			for hi, h := range homes {
				var ds []time.Duration
				for range r.sz.ListCalls {
					if err := ctx.Err(); err != nil {
						return nil, err
					}
					d, err := cliList(h, limit)
					if err != nil {
						return nil, err
					}
					ds = append(ds, d)
				}
				rounds[li][hi] = append(rounds[li][hi], medianMs(ds))
			}
		}
	}
	fig := func(name, title string, li int, target *Target, note string) Figure {
		return Figure{Name: name, Title: title, Value: median(rounds[li][1]), Unit: "ms", Rounds: rounds[li][1],
			Baseline: median(rounds[li][0]), BaselineTitle: fmt.Sprintf("same over %s flows", thousands(int64(r.sz.Flows/100))), BaselineUnit: "ms",
			Target: target, Note: note}
	}
	return []Figure{
		fig(FigList, fmt.Sprintf("tasks flow list over %s flows (default --limit %d)", thousands(int64(r.sz.Flows)), listPage), 0,
			&Target{Of: "value", Op: "<", Limit: 50}, "the first page as the CLI asks it: ViewFlows with Limit 100, plus CountFlows"),
		fig(FigListAll, fmt.Sprintf("tasks flow list --limit 0 over %s flows", thousands(int64(r.sz.Flows))), 1,
			nil, "every flow in one answer; no target: a page is what the CLI shows"),
	}, nil
}
