package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// gatewayProcess runs "flowgate gateway" on home as a process of its own
// (logging to dir/gateway.log, with the extra flags) and waits until it
// serves; kill SIGKILLs it and waits for it to end.
func gatewayProcess(t *testing.T, home, dir string, flags ...string) (kill func()) {
	t.Helper()
	gw := exec.Command(os.Args[0], append([]string{"gateway", "--home", home}, flags...)...)
	logs, err := os.Create(filepath.Join(dir, "gateway.log"))
	require.NoError(t, err)
	t.Cleanup(func() { logs.Close() })
	gw.Stdout, gw.Stderr = logs, logs
	require.NoError(t, gw.Start())
	exited := make(chan struct{})
	go func() {
		gw.Wait()
		close(exited)
	}()
	kill = func() {
		gw.Process.Signal(syscall.SIGKILL)
		<-exited
	}
	t.Cleanup(kill)
	require.Eventually(t, func() bool {
		code, stdout, _ := run(t, home, "gateway", "status", "--json")
		return code == 0 && strings.Contains(stdout, `"running": true`)
	}, 20*time.Second, 50*time.Millisecond, "the gateway process did not come up")
	return kill
}

// lineages is what flowgate sessions show NAME --json says (nil when the
// session has none).
func lineages(t *testing.T, home, name string) []sdk.Lineage {
	t.Helper()
	code, out, errOut := run(t, home, "sessions", "show", name, "--json")
	if code == 1 && strings.Contains(errOut, "has no lineage") {
		return nil
	}
	require.Equal(t, 0, code, errOut)
	var ls []sdk.Lineage
	require.NoError(t, json.Unmarshal([]byte(out), &ls), out)
	return ls
}

// TestAgentSessionAcrossACrashACopyACheckAndNew drives the fake agent
// through a session's life: the gateway and the task are killed during
// the first step, and the next run continues the same session with the
// resume prompt and a wake banner; a copy of the workspace starts fresh;
// a session that --session-check says is gone starts fresh; --new
// archives the lineage and its notes, and the old lineage stays readable.
func TestAgentSessionAcrossACrashACopyACheckAndNew(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o700))
	ledger, store := filepath.Join(dir, "ledger"), filepath.Join(dir, "store")
	agent := func(cwd, mode string, flags ...string) []string {
		a := []string{"tasks", "run", "--session", "work", "--cwd", cwd, "--prompt", "build the thing", "--resume-prompt", "carry on where you stopped"}
		return append(append(a, flags...), "--", os.Args[0], fakeAgentCmd, ledger, store, mode)
	}

	// The first step: the agent reports its session and hangs; its id is
	// in the lineage before anything else happens.
	kill := gatewayProcess(t, home, dir)
	code, stdout, errOut := run(t, home, agent(ws, "hang", "--detach")...)
	require.Equal(t, 0, code, stdout+errOut)
	var first string
	require.Eventually(t, func() bool {
		ls := lineages(t, home, "work")
		if len(ls) == 1 {
			first = ls[0].Steps["main"].SessionID
		}
		return first != "" && len(agentCalls(t, ledger)) == 1
	}, 20*time.Second, 20*time.Millisecond, "the agent never reported its session")
	call := agentCalls(t, ledger)[0]
	require.Equal(t, agentCall{Prompt: "build the thing", Reported: first, PID: call.PID}, call)

	// The crash: the gateway and the task die during the first step.
	kill()
	require.NoError(t, syscall.Kill(call.PID, syscall.SIGKILL))

	// The next run continues the same session with the resume prompt.
	code, stdout, errOut = run(t, home, agent(ws, "done")...)
	require.Equal(t, 0, code, stdout+errOut)
	require.Contains(t, errOut, "flowgate: waking session work in "+ws+" (wake 1): step main continues "+first+" after an interrupted run, context 1200 tokens")
	call = agentCalls(t, ledger)[1]
	require.Equal(t, agentCall{Prompt: "carry on where you stopped", Session: first, Resume: true, Reported: first, PID: call.PID}, call)
	code, stdout, errOut = run(t, home, "tasks", "list", "--json")
	require.Equal(t, 0, code, errOut)
	var tasks struct{ Tasks []apitype.Task }
	require.NoError(t, json.Unmarshal([]byte(stdout), &tasks), stdout)
	resumed := slices.IndexFunc(tasks.Tasks, func(t apitype.Task) bool { return t.Session != nil && t.Session.Resumed })
	require.GreaterOrEqual(t, resumed, 0, stdout)
	code, stdout, errOut = run(t, home, "tasks", "show", tasks.Tasks[resumed].ID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `session:\s+`+first+` \(continued an interrupted run: resume prompt\)`, stdout)
	require.Regexp(t, `wakeBanner:\s+flowgate: waking session work`, stdout)

	// A run after a finished one continues too, with its own prompt,
	// while the check finds the session.
	check := "--session-check=test -e " + store + `/"$FLOWGATE_SESSION_ID"`
	code, stdout, errOut = run(t, home, agent(ws, "done", check)...)
	require.Equal(t, 0, code, stdout+errOut)
	call = agentCalls(t, ledger)[2]
	require.Equal(t, agentCall{Prompt: "build the thing", Session: first, Resume: true, Reported: first, PID: call.PID}, call)

	// A copy of the workspace does not inherit the lineage.
	copied := filepath.Join(dir, "copy")
	require.NoError(t, os.CopyFS(copied, os.DirFS(ws)))
	code, stdout, errOut = run(t, home, agent(copied, "done")...)
	require.Equal(t, 0, code, stdout+errOut)
	require.NotContains(t, errOut, "waking")
	call = agentCalls(t, ledger)[3]
	require.False(t, call.Resume)
	require.Equal(t, "build the thing", call.Prompt)

	// A session the check says is gone is started afresh, silently.
	require.NoError(t, os.Remove(filepath.Join(store, first)))
	code, stdout, errOut = run(t, home, agent(ws, "done", check)...)
	require.Equal(t, 0, code, stdout+errOut)
	require.NotContains(t, errOut, "waking")
	call = agentCalls(t, ledger)[4]
	require.False(t, call.Resume)
	second := call.Reported
	require.NotEqual(t, first, second)

	// --new archives the lineage and its notes; the old one stays readable.
	notes := filepath.Join(home, "sessions", "work")
	require.NoError(t, os.WriteFile(filepath.Join(notes, "notes.md"), []byte("tried X"), 0o600))
	code, stdout, errOut = run(t, home, agent(ws, "done", "--new")...)
	require.Equal(t, 0, code, stdout+errOut)
	require.Contains(t, errOut, "Archived session work in "+ws+" (2 wakes)")
	call = agentCalls(t, ledger)[5]
	require.False(t, call.Resume)
	var live, archived []sdk.Lineage
	for _, l := range lineages(t, home, "work") {
		if l.ArchivedAt.IsZero() {
			live = append(live, l)
		} else {
			archived = append(archived, l)
		}
	}
	require.Len(t, live, 2, "the workspace's new lineage and the copy's")
	require.Len(t, archived, 1)
	require.Equal(t, ws, archived[0].Workspace)
	require.Equal(t, second, archived[0].Steps["main"].SessionID)
	require.Equal(t, 2, archived[0].Wakes, "two runs continued it")
	kept, err := filepath.Glob(filepath.Join(notes, "archive", "*", "notes.md"))
	require.NoError(t, err)
	require.Len(t, kept, 1, "the notes are archived, not deleted")
	_, err = os.Stat(filepath.Join(notes, "notes.md"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestPipelineSessionResumePromptAndFresh runs a workflow with --session
// twice: the agent step failed after reporting its session, so the
// second run continues it with the step's resume_prompt; the fresh judge
// step starts a new session both times.
func TestPipelineSessionResumePromptAndFresh(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	ledger, store := filepath.Join(dir, "ledger"), filepath.Join(dir, "store")
	file := filepath.Join(dir, "agent.lobster")
	env := "cwd: " + dir + "\nenv:\n  AGENT: " + os.Args[0] + "\n  LEDGER: " + ledger + "\n  STORE: " + store + "\n"
	require.NoError(t, os.WriteFile(file, []byte(env+`args:
  mode: {default: done}
steps:
  - id: judge
    run: '"$AGENT" fake-agent "$LEDGER" "$STORE" done'
    fresh: true
  - id: work
    run: '"$AGENT" fake-agent "$LEDGER" "$STORE" ${mode}'
    resume_prompt: carry on where you stopped
`), 0o600))
	wf := func(mode string) []string {
		return []string{"pipeline", "run", file, "--session", "work", "--args-json", `{"mode":"` + mode + `"}`}
	}

	code, stdout, errOut := run(t, home, wf("fail")...)
	require.Equal(t, 1, code, stdout+errOut)
	code, stdout, errOut = run(t, home, wf("done")...)
	require.Equal(t, 0, code, stdout+errOut)
	require.Contains(t, errOut, "flowgate: waking session work in "+dir+" (wake 1): step work continues ")

	calls := agentCalls(t, ledger)
	require.Len(t, calls, 4)
	judge1, work1, judge2, work2 := calls[0], calls[1], calls[2], calls[3]
	require.False(t, judge1.Resume)
	require.False(t, work1.Resume)
	require.False(t, judge2.Resume, "a fresh step never continues")
	require.NotEqual(t, judge1.Reported, judge2.Reported)
	require.Equal(t, agentCall{Prompt: "carry on where you stopped", Session: work1.Reported, Resume: true, Reported: work1.Reported, PID: work2.PID}, work2)
	ls := lineages(t, home, "work")
	require.Len(t, ls, 1)
	require.Equal(t, 1, ls[0].Wakes)
	require.Equal(t, work1.Reported, ls[0].Steps["work"].SessionID)
	require.Equal(t, judge2.Reported, ls[0].Steps["judge"].SessionID)

	// The check sees the step's environment: a session it finds is
	// continued (with no resume prompt: the last run succeeded), one it
	// does not find starts afresh.
	check := []string{"--session-check", `test -e "$STORE/$FLOWGATE_SESSION_ID"`}
	code, stdout, errOut = run(t, home, append(wf("done"), check...)...)
	require.Equal(t, 0, code, stdout+errOut)
	calls = agentCalls(t, ledger)
	require.Len(t, calls, 6)
	require.Equal(t, agentCall{Session: work1.Reported, Resume: true, Reported: work1.Reported, PID: calls[5].PID}, calls[5])
	require.NoError(t, os.Remove(filepath.Join(store, work1.Reported)))
	code, stdout, errOut = run(t, home, append(wf("done"), check...)...)
	require.Equal(t, 0, code, stdout+errOut)
	require.NotContains(t, errOut, "waking")
	calls = agentCalls(t, ledger)
	require.Len(t, calls, 8)
	require.False(t, calls[7].Resume)
}

func TestSessionsCommandsAndBadFlags(t *testing.T) {
	t.Parallel()
	home, ws := shortHome(t), t.TempDir()
	code, stdout, errOut := run(t, home, "sessions", "list")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Sessions: 0\n", stdout)
	code, _, errOut = run(t, home, "sessions", "show", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "session nope has no lineage; list them with flowgate sessions list")
	code, stdout, errOut = run(t, home, "sessions", "archive", "nope", "--workspace", ws)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Session nope has no live lineage in "+ws+"; its next run starts fresh.\n", stdout)

	code, _, errOut = run(t, home, "tasks", "run", "--session", "work", "--cwd", ws, "--", "sh", "-c", `echo '{"session_id":"s-1"}' >> "$FLOWGATE_PROGRESS"`)
	require.Equal(t, 0, code, errOut)
	code, stdout, errOut = run(t, home, "sessions", "list")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^work\s+0\s+1\s+\S+\s+live\s+`+ws+`$`, stdout)

	for _, tc := range []struct{ args, want string }{
		{"tasks run --session a/b -- true", `session "a/b" is not a name`},
		{"tasks run --new -- true", "--new needs --session NAME"},
		{"tasks run --resume-prompt go -- true", "--resume-prompt needs --session NAME"},
		{"pipeline run x.lobster --new", "--new needs --session NAME"},
		{"pipeline run x.lobster --session-check true", "--session-check needs --session NAME"},
		{"pipeline run x.lobster --session w --from-step a --id f", "--session applies to new runs"},
		{"sessions show ../x", `session "../x" is not a name`},
	} {
		code, _, errOut := run(t, home, strings.Fields(tc.args)...)
		require.Equal(t, 2, code, tc.args+": "+errOut)
		require.Contains(t, errOut, tc.want, tc.args)
	}
}
