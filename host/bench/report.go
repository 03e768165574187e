package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Report is the outcome of a run: every figure, and the verdict against
// the targets.
type Report struct {
	// Dir is the directory whose file system was measured.
	Dir     string    `json:"dir"`
	Quick   bool      `json:"quick"`
	Sizes   Sizes     `json:"sizes"`
	Machine Machine   `json:"machine"`
	Started time.Time `json:"started_at"`
	// Seconds is how long the run took.
	Seconds float64  `json:"duration_seconds"`
	Figures []Figure `json:"figures"`
	// Skipped names the figures left out and why (Lobster not
	// installable, say); they count toward no verdict.
	Skipped []string `json:"skipped,omitempty"`
	Verdict Verdict  `json:"verdict"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs int    `json:"cpus"`
	Go   string `json:"go"`
	OS   string `json:"os"`
}

// Figure is one measured value beside its baseline, measured in the same
// interleaved rounds. Ratio is Value/Baseline; both are zero for a figure
// without a baseline (the raw fsync rate, which is itself the baseline of
// others).
type Figure struct {
	Name  string  `json:"name"`
	Title string  `json:"title"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Rounds is Value in each round; Value is their median.
	Rounds        []float64 `json:"rounds"`
	Baseline      float64   `json:"baseline,omitempty"`
	BaselineTitle string    `json:"baseline_title,omitempty"`
	BaselineUnit  string    `json:"baseline_unit,omitempty"`
	Ratio         float64   `json:"ratio,omitempty"`
	// Target is what docs/performance.md asks of the figure, if anything.
	Target *Target `json:"target,omitempty"`
	// Met reports whether Target holds; nil without a target.
	Met  *bool  `json:"met,omitempty"`
	Note string `json:"note,omitempty"`
}

// Target is a bound on a figure's Ratio (Of "ratio") or Value (Of
// "value"): at least Limit (Op ">="), at most (Op "<="), or under (Op
// "<").
type Target struct {
	Of    string  `json:"of"`
	Op    string  `json:"op"`
	Limit float64 `json:"limit"`
}

// String is the target as the table shows it: "≥ 0.3×", "< 50 ms".
func (t Target) String() string {
	op := map[string]string{">=": "≥", "<=": "≤", "<": "<"}[t.Op]
	limit := strconv.FormatFloat(t.Limit, 'f', -1, 64)
	if t.Of == "ratio" {
		return fmt.Sprintf("%s %s×", op, limit)
	}
	return fmt.Sprintf("%s %s", op, limit)
}

// holds reports whether v meets the target.
func (t Target) holds(v float64) bool {
	switch t.Op {
	case ">=":
		return v >= t.Limit
	case "<=":
		return v <= t.Limit
	default:
		return v < t.Limit
	}
}

// Verdict counts the targets met and names the missed ones.
type Verdict struct {
	Met    int      `json:"met"`
	Total  int      `json:"total"`
	Missed []string `json:"missed"`
	Line   string   `json:"line"`
}

// judge sets f.Ratio from Value and Baseline and f.Met from the target.
func (f *Figure) judge() {
	if f.Baseline > 0 {
		f.Ratio = f.Value / f.Baseline
	}
	if f.Target == nil {
		return
	}
	v := f.Value
	if f.Target.Of == "ratio" {
		v = f.Ratio
	}
	met := f.Target.holds(v)
	f.Met = &met
}

// verdict sums up the figures' targets.
func verdict(figs []Figure) Verdict {
	v := Verdict{Missed: []string{}}
	for _, f := range figs {
		if f.Met == nil {
			continue
		}
		v.Total++
		if *f.Met {
			v.Met++
			continue
		}
		got := Format(f.Value) + " " + f.Unit
		if f.Target.Of == "ratio" {
			got = Format(f.Ratio) + "×"
		}
		want := f.Target.String()
		if f.Target.Of == "value" {
			want += " " + f.Unit
		}
		v.Missed = append(v.Missed, fmt.Sprintf("%s %s (target %s)", f.Title, got, want))
	}
	switch {
	case v.Total == 0:
		v.Line = "no targets measured"
	case v.Met == v.Total:
		v.Line = fmt.Sprintf("PASS: all %d targets met", v.Total)
	default:
		v.Line = fmt.Sprintf("FAIL: %d of %d targets met; missed: %s", v.Met, v.Total, strings.Join(v.Missed, "; "))
	}
	return v
}

// Format renders v the way the report's text does: three significant
// digits, without exponent, and with thousands separated for large
// values.
func Format(v float64) string {
	switch {
	case v >= 1000:
		return thousands(int64(v + 0.5))
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3g", v), "0"), ".")
	}
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
