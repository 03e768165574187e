package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

func newDemoCmd(e *env) *cobra.Command {
	var keep bool
	return &cobra.Command{
		Use:   "demo",
		Short: "Tour flowgate's records and CLI on a temporary home",
		Long: `Run a short scripted tour on a fresh temporary home: create a managed flow,
record a detached task with its mirrored flow, update a flow with its
revision, watch a stale writer conflict, cancel a flow, and list and show
everything. Your own home is not touched.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "flowgate-demo-")
			if err != nil {
				return err
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			return runDemo(e, dir)
		},
	}
}

func runDemo(e *env, dir string) error {
	w := e.stdout
	fmt.Fprintf(w, "Demo home: %s\n", dir)
	// A detached task, recorded the way `tasks run` (next) records one.
	local, err := api.OpenLocal(dir, "flowgate demo")
	if err != nil {
		return err
	}
	eng := local.Engine()
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "demo", Label: "backup photos", Spec: sdk.TaskSpec{Argv: []string{"rsync", "-a", "photos/", "nas:photos/"}}})
	if err == nil {
		_, err = eng.StartTask(task.ID, engine.StartInput{})
	}
	if err == nil {
		code := 0
		_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, ExitCode: &code})
	}
	var f *sdk.Flow
	if err == nil {
		f, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "demo", ControllerID: "pipeline", Goal: "nightly report", State: []byte(`{"step":"fetch"}`)})
	}
	if err == nil {
		_, _, err = eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: "fetch sales data", Spec: sdk.TaskSpec{Shell: "curl -s https://example.invalid/sales"}})
	}
	if cerr := local.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	steps := [][]string{
		{"tasks", "list"},
		{"tasks", "flow", "list"},
		{"tasks", "flow", "update", f.ID, "--expected-revision", "0", "--status", "running", "--state", `{"step":"render"}`},
		{"tasks", "flow", "update", f.ID, "--expected-revision", "0", "--state", `{"step":"stale"}`},
		{"tasks", "flow", "cancel", f.ID},
		{"tasks", "flow", "show", f.ID},
	}
	for _, s := range steps {
		fmt.Fprintf(w, "\n$ flowgate %s\n", quoteArgs(s))
		code := Main(append([]string{"--home", dir}, s...), w, w)
		if code != 0 {
			fmt.Fprintf(w, "(exit %d)\n", code)
		}
	}
	return nil
}

func quoteArgs(a []string) string {
	out := make([]string, len(a))
	for i, s := range a {
		if strings.ContainsAny(s, ` "{}`) {
			s = strconv.Quote(s)
			s = "'" + s[1:len(s)-1] + "'"
			s = strings.ReplaceAll(s, `\"`, `"`)
		}
		out[i] = s
	}
	return strings.Join(out, " ")
}
