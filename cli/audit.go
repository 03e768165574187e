package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
)

// auditFilters echoes the filters of an audit; null when not given.
type auditFilters struct {
	Severity *api.AuditSeverity `json:"severity"`
	Code     *api.AuditCode     `json:"code"`
	Limit    *int               `json:"limit"`
}

// auditOutput is `tasks audit --json`: the reference's shape, with
// flowgate's snake_case names and the checks that were skipped.
type auditOutput struct {
	Count         int                `json:"count"`
	FilteredCount int                `json:"filtered_count"`
	Displayed     int                `json:"displayed"`
	Filters       auditFilters       `json:"filters"`
	Summary       api.AuditSummary   `json:"summary"`
	Findings      []api.AuditFinding `json:"findings"`
	Skipped       []api.AuditSkip    `json:"skipped"`
}

type auditOpts struct {
	severity, code, failOn string
	limit                  int
	json                   bool
}

func newAuditCmd(e *env) *cobra.Command {
	var o auditOpts
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Find stuck, lost, leaking and inconsistent tasks and flows",
		Long: `Audit every task and flow: stale work, lost tasks, failed deliveries,
missing cleanup, inconsistent records, unavailable controllers, event
backlogs, orphan processes and index damage. docs/audit.md explains each
code and what to do about it. Findings are sorted errors first, then oldest.

--severity and --code keep only the matching findings; --limit shows the
first N of those. --fail-on exits 4 when a finding that passes the filters
(before --limit) is at or above the given severity, for scripts and cron.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error { return e.audit(cmd, o) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print the report as JSON")
	f.StringVar(&o.severity, "severity", "", "show only findings of this severity (warn or error)")
	f.StringVar(&o.code, "code", "", "show only findings with this code")
	f.IntVar(&o.limit, "limit", 0, "show at most this many findings")
	f.StringVar(&o.failOn, "fail-on", "", "exit 4 if a finding at or above this severity (warn or error) passes the filters")
	return cmd
}

// severityFlag reads a --severity or --fail-on value.
func severityFlag(flag, v string) (*api.AuditSeverity, error) {
	if v == "" {
		return nil, nil
	}
	s := api.AuditSeverity(v)
	if !slices.Contains(api.AuditSeverities(), s) {
		return nil, usageError{fmt.Errorf("--%s %q: want one of warn, error", flag, v)}
	}
	return &s, nil
}

func (e *env) audit(cmd *cobra.Command, o auditOpts) error {
	var (
		filters auditFilters
		err     error
	)
	if filters.Severity, err = severityFlag("severity", o.severity); err != nil {
		return err
	}
	failOn, err := severityFlag("fail-on", o.failOn)
	if err != nil {
		return err
	}
	if o.code != "" {
		c := api.AuditCode(o.code)
		if !slices.Contains(api.AuditCodes(), c) {
			names := make([]string, 0, len(api.AuditCodes()))
			for _, c := range api.AuditCodes() {
				names = append(names, string(c))
			}
			return usageError{fmt.Errorf("--code %q: want one of %s", o.code, strings.Join(names, ", "))}
		}
		filters.Code = &c
	}
	if cmd.Flags().Changed("limit") {
		if o.limit < 1 {
			return usageError{fmt.Errorf("--limit must be a positive whole number (got %d)", o.limit)}
		}
		filters.Limit = &o.limit
	}
	return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
		rep, err := c.Audit(ctx)
		if err != nil {
			return err
		}
		out := auditOutput{Count: len(rep.Findings), Filters: filters, Summary: rep.Summary, Skipped: rep.Skipped, Findings: []api.AuditFinding{}}
		for _, f := range rep.Findings {
			if (filters.Severity == nil || f.Severity == *filters.Severity) && (filters.Code == nil || f.Code == *filters.Code) {
				out.Findings = append(out.Findings, f)
			}
		}
		out.FilteredCount = len(out.Findings)
		failing := 0
		for _, f := range out.Findings {
			if failOn != nil && f.Severity.AtLeast(*failOn) {
				failing++
			}
		}
		if filters.Limit != nil && len(out.Findings) > *filters.Limit {
			out.Findings = out.Findings[:*filters.Limit]
		}
		out.Displayed = len(out.Findings)
		if out.Skipped == nil {
			out.Skipped = []api.AuditSkip{}
		}
		if err := (printer{e.stdout, o.json}).emit(out, func(w io.Writer) { writeAudit(w, out) }); err != nil {
			return err
		}
		if failing > 0 {
			return exitStatus{code: exitFindings, msg: fmt.Sprintf("%d audit findings at or above %s (--fail-on)", failing, *failOn)}
		}
		return nil
	})
}

func writeAudit(w io.Writer, o auditOutput) {
	c := o.Summary.Combined
	fmt.Fprintf(w, "Tasks audit: %d findings · %d errors · %d warnings\n", c.Total, c.Errors, c.Warnings)
	if o.Filters.Severity != nil {
		fmt.Fprintf(w, "Severity filter: %s\n", *o.Filters.Severity)
	}
	if o.Filters.Code != nil {
		fmt.Fprintf(w, "Code filter: %s\n", *o.Filters.Code)
	}
	if o.Filters.Limit != nil {
		fmt.Fprintf(w, "Limit: %d\n", *o.Filters.Limit)
	}
	tasks := 0
	for _, f := range o.Findings {
		if f.Kind == api.AuditKindTask {
			tasks++
		}
	}
	fmt.Fprintf(w, "Task findings: %d · TaskFlow findings: %d\n", tasks, len(o.Findings)-tasks)
	if len(o.Findings) == 0 {
		fmt.Fprintln(w, "No tasks audit findings.")
	} else {
		var t table
		t.add("Scope", "Severity", "Code", "Item", "Status", "Age", "Detail")
		for _, f := range o.Findings {
			scope := "TaskFlow"
			if f.Kind == api.AuditKindTask {
				scope = "Task"
			}
			t.add(scope, string(f.Severity), string(f.Code), clean(orNA(f.Token)), orNA(f.Status), auditAge(f.AgeMS), clip(f.Detail, 88))
		}
		t.write(w)
	}
	for _, s := range o.Skipped {
		fmt.Fprintf(w, "Not checked: %s (%s)\n", s.Code, clean(s.Reason))
	}
}

// auditAge renders an age as the reference does: fresh, Ns, Nm, NhMm or
// NdHh; n/a when there is none.
func auditAge(ms *int64) string {
	if ms == nil {
		return "n/a"
	}
	d := time.Duration(*ms) * time.Millisecond
	switch {
	case d < time.Second:
		return "fresh"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}
