package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins"
)

func newDemoCmd(e *env) *cobra.Command {
	var keep bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Tour flowgate on a temporary home: a gateway, tasks, flows",
		Long: `Run a short scripted tour on a fresh temporary home: start a gateway, run a
task that reports progress and milestones, retry a task that fails once,
cancel a running task, run a workflow file that stops at an approval gate
and approve it, change a managed flow with revisions (and watch a stale
writer conflict), schedule a cron job every 10 seconds and watch it fire,
then list everything. Your own home is not touched.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "flowgate-demo-")
			if err != nil {
				return err
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			return runDemo(cmd.Context(), e, dir)
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the temporary home afterwards, to look around in it")
	return cmd
}

// demoTask is the example task of examples/progress-task.sh, inline so the
// demo runs from any directory.
const demoTask = `p=$FLOWGATE_PROGRESS
echo "gathering sources"
for i in 1 2 3; do sleep 0.3; echo "{\"fraction\":0.$((i * 15)),\"phase\":\"gathering\",\"message\":\"source $i of 3\"}" >>$p; done
echo '{"milestone":"sources-gathered","message":"3 sources"}' >>$p
echo "rendering"
for i in 1 2 3; do sleep 0.3; echo "{\"fraction\":0.$((45 + i * 15)),\"phase\":\"rendering\",\"message\":\"page $i of 3\"}" >>$p; done
echo '{"fraction":1,"phase":"done","message":"report ready"}' >>$p
echo '{"milestone":"report-rendered"}' >>$p
echo '{"pages":3,"sources":3}'`

// demoPipeline is a small workflow file with an approval gate.
const demoPipeline = `name: brief
args:
  topic:
    default: weather
steps:
  - id: collect
    run: echo "{\"topic\":\"${topic}\",\"average\":101.5}"
  - id: review
    approval: Publish this brief?
    stdin: $collect.stdout
  - id: publish
    when: $review.approved
    stdin: $collect.stdout
    run: cat
`

func runDemo(ctx context.Context, e *env, dir string) error {
	w := e.stdout
	g, err := gateway.New(gateway.Config{Home: dir, Owner: "flowgate demo", Builtins: plugins.Names(), Controllers: plugins.Controllers()})
	if err != nil {
		return err
	}
	if err := g.Start(ctx); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = g.Stop(sctx)
	}()
	fmt.Fprintf(w, "A gateway is running on the temporary home %s (pid %d).\n", dir, os.Getpid())

	step := func(args ...string) string {
		fmt.Fprintf(w, "\n$ flowgate %s\n", quoteArgs(args))
		var out strings.Builder
		code := Main(append([]string{"--home", dir}, args...), teeWriter{w, &out}, w)
		if code != 0 {
			fmt.Fprintf(w, "(exit %d)\n", code)
		}
		return out.String()
	}
	step("cron", "add", "--name", "heartbeat", "--every", "10s", "--command", `echo "heartbeat for $FLOWGATE_CRON_SCHEDULED"`)
	step("cron", "run", "heartbeat", "--wait")
	step("tasks", "run", "--label", "report", "--shell", "--", demoTask)
	step("tasks", "run", "--label", "flaky", "--retries", "2", "--retry-backoff", "300ms", "--shell", "--",
		`if [ "$FLOWGATE_ATTEMPT" = 1 ]; then echo "service busy, try later" >&2; exit 75; fi; echo "worked on attempt $FLOWGATE_ATTEMPT"`)
	out := step("tasks", "run", "--detach", "--label", "long job", "--", "sleep", "600")
	if id := word(out, 1); id != "" {
		step("tasks", "cancel", id)
		waitFor(func() bool { return strings.Contains(runQuiet(dir, "tasks", "show", id), "cancelled") })
	}
	wf := filepath.Join(dir, "brief.lobster")
	if err := os.WriteFile(wf, []byte(demoPipeline), 0o600); err != nil {
		return err
	}
	out = step("pipeline", "run", wf, "--args-json", `{"topic":"cocoa"}`)
	var paused struct {
		RequiresApproval struct {
			ApprovalID string `json:"approvalId"`
		} `json:"requiresApproval"`
	}
	if json.Unmarshal([]byte(out), &paused) == nil && paused.RequiresApproval.ApprovalID != "" {
		step("approvals")
		step("pipeline", "resume", "--id", paused.RequiresApproval.ApprovalID, "--approve", "yes", "--by", "demo")
	}
	out = step("tasks", "flow", "create", "--controller", "my-controller", "--allow-unknown-controller", "--goal", "nightly report", "--owner", "demo")
	if id := word(out, 2); id != "" {
		// A stale revision is refused; the revision the create printed
		// is the one to write with.
		step("tasks", "flow", "update", id, "--expected-revision", "0", "--state", `{"step":"stale"}`)
		step("tasks", "flow", "update", id, "--expected-revision", "1", "--status", "running", "--state", `{"step":"render"}`)
	}
	// By now the heartbeat's first scheduled run is due or done.
	var scheduled string
	waitFor(func() bool {
		scheduled = scheduledRun(runQuiet(dir, "cron", "runs", "heartbeat", "--json"))
		return scheduled != ""
	})
	step("cron", "runs", "heartbeat")
	if scheduled != "" {
		step("tasks", "logs", scheduled)
	}
	step("cron", "list")
	step("tasks", "list")
	step("tasks", "flow", "list")
	step("gateway", "status")
	return nil
}

// scheduledRun returns the task of the newest run that the schedule fired
// and that ended ok, from cron runs --json output, or "".
func scheduledRun(out string) string {
	var l struct {
		Runs []struct {
			Status, Trigger string
			TaskID          string `json:"task_id"`
		} `json:"runs"`
	}
	if json.Unmarshal([]byte(out), &l) != nil {
		return ""
	}
	for _, r := range l.Runs {
		if r.Trigger == "schedule" && r.Status == "ok" {
			return r.TaskID
		}
	}
	return ""
}

// teeWriter writes to both writers.
type teeWriter struct {
	a io.Writer
	b *strings.Builder
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.b.Write(p)
	return t.a.Write(p)
}

func runQuiet(dir string, args ...string) string {
	var out, errb strings.Builder
	Main(append([]string{"--home", dir}, args...), &out, &errb)
	return out.String()
}

// waitFor polls cond for up to fifteen seconds.
func waitFor(cond func() bool) {
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !cond(); {
		time.Sleep(50 * time.Millisecond)
	}
}

// word returns the i-th word of the first line of out ("Task ID …",
// "Created flow ID …"), or "".
func word(out string, i int) string {
	line, _, _ := strings.Cut(out, "\n")
	if f := strings.Fields(line); len(f) > i {
		return f[i]
	}
	return ""
}

func quoteArgs(a []string) string {
	out := make([]string, len(a))
	for i, s := range a {
		if strings.ContainsAny(s, " \"{}$;\n") {
			if strings.Contains(s, "\n") {
				s = strings.SplitN(s, "\n", 2)[0] + " …"
			}
			s = strconv.Quote(s)
			s = "'" + s[1:len(s)-1] + "'"
			s = strings.ReplaceAll(s, `\"`, `"`)
		}
		out[i] = s
	}
	return strings.Join(out, " ")
}
