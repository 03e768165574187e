package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// taskSummaryOutput is the JSON shape of `tasks summary`: the counts and
// the records that could not be read (absent when none), which are not
// counted.
type taskSummaryOutput struct {
	sdk.TaskSummary
	Damaged []apitype.DamagedRecord `json:"damaged,omitempty"`
}

func newTasksSummaryCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "summary",
		Short: "Count the tasks by status and by runtime",
		Long: `Count every recorded task: the total, how many are active (queued or
running), terminal and failures (failed, timed_out, lost), then by status
and by runtime (cli, pipeline, cron, agent or a plugin's kind), like the
reference's task registry summary.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withReader(cmd, func(ctx context.Context, c api.Client) error {
				var tasks []*apitype.Task
				var out taskSummaryOutput
				for f := (apitype.TaskFilter{}); ; {
					page, err := c.ListTasks(ctx, f)
					if err != nil {
						return err
					}
					tasks, out.Damaged = append(tasks, page.Tasks...), append(out.Damaged, page.Damaged...)
					if f.After = page.Next; f.After == "" {
						break
					}
				}
				out.TaskSummary = sdk.Summarize(apitype.Publics(tasks))
				e.warnDamaged(asJSON, out.Damaged)
				return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) { writeTaskSummary(w, out.TaskSummary) })
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts as JSON")
	return cmd
}

// writeTaskSummary prints s: the totals, then one row per status in
// lifecycle order and one per runtime by name, zero counts left out.
func writeTaskSummary(w io.Writer, s sdk.TaskSummary) {
	fmt.Fprintf(w, "Tasks: %d · %d active · %d terminal · %d failures\n", s.Total, s.Active, s.Terminal, s.Failures)
	if s.Total == 0 {
		return
	}
	var t table
	t.add("By status", "Count")
	for _, st := range sdk.TaskStatuses() {
		if n := s.ByStatus[st]; n > 0 {
			t.add(string(st), strconv.Itoa(n))
		}
	}
	t.add("", "")
	t.add("By runtime", "Count")
	for _, rt := range slices.Sorted(maps.Keys(s.ByRuntime)) {
		t.add(clean(rt), strconv.Itoa(s.ByRuntime[rt]))
	}
	t.write(w)
}
