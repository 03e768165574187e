package runcenter_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

// failedTaskSite is a site with one flow whose one task failed, with
// stdout and stderr written as a real task's would be.
func failedTaskSite(t *testing.T, stdout, stderr string) (s *site, flowID, taskID string) {
	t.Helper()
	s = startSeeded(t, func(eng *engine.Engine) {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
		require.NoError(t, err)
		task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: "breaker"})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		one := 1
		_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, ExitCode: &one, Error: "exit 1"})
		require.NoError(t, err)
		flowID, taskID = f.ID, task.ID
	})
	dir := runner.LogDir(s.home, taskID, 1)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stdout"), []byte(stdout), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stderr"), []byte(stderr), 0o600))
	return s, flowID, taskID
}

// With JavaScript off the logs page is readable: a failed task's page
// opens on its stderr, where the error is, and the tabs are plain links
// to each stream; follow shows the log's last chunk.
func TestLogsPageOpensOnStderrOfAFailedTask(t *testing.T) {
	t.Parallel()
	s, flowID, taskID := failedTaskSite(t, "all went well\n", strings.Repeat("x", 70<<10)+"boom: disk full\n")

	page := s.get("/flows/"+flowID+"/logs", "")
	require.Contains(t, page, `data-stream="stderr" class="on" aria-current="page">stderr</a>`, "a failed task opens on stderr")
	require.Contains(t, page, `href="?task=`+taskID+`&amp;stream=stdout" data-stream="stdout">stdout</a>`, "stdout is a link away")
	require.NotContains(t, page, "boom: disk full", "without follow the page starts at the top")

	out := s.get("/flows/"+flowID+"/logs?task="+taskID+"&stream=stdout", "")
	require.Contains(t, out, `data-stream="stdout" class="on"`)
	require.Contains(t, out, "all went well")

	tail := s.get("/flows/"+flowID+"/logs?task="+taskID+"&stream=stderr&follow=1", "")
	require.Contains(t, tail, "boom: disk full", "follow shows the end of the log")
	require.Contains(t, tail, `data-follow`)
	require.Contains(t, tail, "Stop following")
}

// Download answers the whole log, not one page of it, as an attachment
// named for the task, attempt and stream; a log that cannot be had is a
// clear error and no file.
func TestLogDownloadIsTheWholeFileAsAnAttachment(t *testing.T) {
	t.Parallel()
	stderr := strings.Repeat("line of noise\n", 10000) + "boom: disk full\n"
	s, flowID, taskID := failedTaskSite(t, "all went well\n", stderr)

	resp, body := s.do(http.MethodGet, "/flows/"+flowID+"/logs/download?task="+taskID, "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Equal(t, `attachment; filename="`+taskID+`.1.stderr.log"`, resp.Header.Get("Content-Disposition"))
	require.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	require.Equal(t, stderr, body, "the whole file, past the page size")

	resp, body = s.do(http.MethodGet, "/flows/"+flowID+"/logs/download?task="+taskID+"&stream=stdout", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, `attachment; filename="`+taskID+`.1.stdout.log"`, resp.Header.Get("Content-Disposition"))
	require.Equal(t, "all went well\n", body)

	for q, want := range map[string]string{"?task=nope": "has no task", "?stream=both": "is not stdout or stderr", "?attempt=9": "has attempts 1 to 1"} {
		resp, body := s.do(http.MethodGet, "/flows/"+flowID+"/logs/download"+q, "", nil)
		require.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, resp.StatusCode, q)
		require.Empty(t, resp.Header.Get("Content-Disposition"), q)
		require.Contains(t, body, want, q)
	}
}
