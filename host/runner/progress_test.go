package runner_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// progressScript writes the progress lines of the progress tests: two
// snapshots, two milestones and four lines that must be skipped.
const progressScript = `p="$FLOWGATE_PROGRESS"
echo '{"fraction":0.25,"phase":"download"}' >> "$p"
echo 'not json at all' >> "$p"
echo '[1, 2, 3]' >> "$p"
echo '{"fraction":-1,"phase":"nonsense"}' >> "$p"
head -c 102400 /dev/zero | tr '\0' x >> "$p"; echo >> "$p"
echo '{"milestone":"downloaded","message":"42 files","data":{"files":42}}' >> "$p"
echo >> "$p"
echo '{"fraction":0.75,"phase":"upload","message":"almost"}' >> "$p"
echo '{"milestone":" uploaded "}' >> "$p"
echo done`

func requireProgress(t *testing.T, got *stored.Task) {
	t.Helper()
	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.Equal(t, 4, got.ProgressErrors)
	require.Len(t, got.Milestones, 2)
	require.Equal(t, int64(1), got.Milestones[0].Seq)
	require.Equal(t, "downloaded", got.Milestones[0].Name)
	require.Equal(t, "42 files", got.Milestones[0].Message)
	require.JSONEq(t, `{"files":42}`, string(got.Milestones[0].Data))
	require.Equal(t, int64(2), got.Milestones[1].Seq)
	require.Equal(t, "uploaded", got.Milestones[1].Name)
	require.NotNil(t, got.Progress)
	require.NotNil(t, got.Progress.Fraction)
	require.Equal(t, 0.75, *got.Progress.Fraction)
	require.Equal(t, "upload", got.Progress.Phase)
	require.Equal(t, "almost", got.Progress.Message)
	require.False(t, got.Progress.At.IsZero())
}

func TestProgress(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(h.spec(progressScript))
	got := h.wait(task.ID)
	requireProgress(t, got)
	fi, err := os.Stat(filepath.Join(h.dir, "logs", task.ID, "progress.jsonl"))
	require.NoError(t, err)
	require.Equal(t, fi.Size(), got.ProgressOffset, "every line is read")
}

func TestProgressEventsOfManagedFlow(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	flow, err := h.eng().CreateFlow(engine.CreateFlowInput{OwnerKey: "t", ControllerID: "ctl", Goal: "sync"})
	require.NoError(t, err)
	task, _, err := h.eng().CreateTask(engine.CreateTaskInput{FlowID: flow.ID, Spec: h.spec(progressScript)})
	require.NoError(t, err)
	requireProgress(t, h.wait(task.ID))

	events, err := h.eng().Events(flow.ID)
	require.NoError(t, err)
	var types []sdk.EventType
	var names []string
	for _, ev := range events {
		types = append(types, ev.Type)
		if ev.Type == sdk.EventTaskMilestone {
			require.Equal(t, task.ID, ev.TaskID)
			var m sdk.Milestone
			require.NoError(t, json.Unmarshal(ev.Data, &m))
			names = append(names, m.Name)
		}
	}
	require.Equal(t, []sdk.EventType{sdk.EventFlowStarted, sdk.EventTaskMilestone, sdk.EventTaskMilestone, sdk.EventTaskFinished}, types)
	require.Equal(t, []string{"downloaded", "uploaded"}, names)
}

// Everything the task wrote to its progress file is recorded, even when
// it takes several reads: here the runner only reads it once the task has
// ended (its poll never comes), and a line longer than one read plus more
// than one read's worth of snapshots come before the last milestone.
func TestProgressAllReadWhenTaskEnds(t *testing.T) {
	t.Parallel()
	h := startHome(t, func(c *runner.Config) { c.Poll = time.Hour })
	task := h.create(h.spec(`p="$FLOWGATE_PROGRESS"
head -c 3000000 /dev/zero | tr '\0' x >> "$p"; echo >> "$p"
seq 1 60000 | sed 's/.*/{"phase":"p&"}/' >> "$p"
echo '{"milestone":"last"}' >> "$p"`))
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	require.Equal(t, 1, got.ProgressErrors)
	require.NotNil(t, got.Progress)
	require.Equal(t, "p60000", got.Progress.Phase)
	require.Len(t, got.Milestones, 1)
	require.Equal(t, "last", got.Milestones[0].Name)
	fi, err := os.Stat(filepath.Join(h.dir, "logs", task.ID, "progress.jsonl"))
	require.NoError(t, err)
	require.Equal(t, fi.Size(), got.ProgressOffset)
}

// Progress is read while the task runs, not only when it ends.
func TestProgressWhileRunning(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(h.spec(`echo '{"milestone":"started"}' >> "$FLOWGATE_PROGRESS"; while [ ! -e release ]; do sleep 0.02; done`))
	got := waitTask(t, h.eng(), task.ID, func(t *stored.Task) bool { return len(t.Milestones) > 0 }, waitLimit)
	require.Equal(t, sdk.TaskRunning, got.Status)
	require.Equal(t, "started", got.Milestones[0].Name)
	require.NoError(t, os.WriteFile(h.path("release"), nil, 0o600))
	got = h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	require.Len(t, got.Milestones, 1)
	require.Zero(t, got.ProgressErrors)
}

// readAll reads the progress file at path from offset from the way the
// runner does, one read after the other, until a read finds nothing new.
// It returns what all the reads found, and the offset reached.
func readAll(t *testing.T, path string, from int64) (milestones []string, last *sdk.Progress, malformed int, to int64) {
	t.Helper()
	for reads := 0; ; reads++ {
		require.Less(t, reads, 100, "reading does not end")
		in, err := runner.ReadProgress(path, from)
		require.NoError(t, err)
		require.Equal(t, from, in.From)
		require.GreaterOrEqual(t, in.To, in.From)
		for _, m := range in.Milestones {
			milestones = append(milestones, m.Name)
		}
		if in.Progress != nil {
			last = in.Progress
		}
		malformed += in.Malformed
		if in.To == from {
			return milestones, last, malformed, from
		}
		from = in.To
	}
}

func TestReadProgress(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("x", n) + "\n" }
	cases := []struct {
		name       string
		content    string
		milestones []string
		phase      string
		malformed  int
		unread     int // bytes left for a later read
	}{
		{"empty", "", nil, "", 0, 0},
		{"snapshots coalesce", `{"phase":"a"}` + "\n" + `{"phase":"b","fraction":1}` + "\n", nil, "b", 0, 0},
		{"milestones in order", `{"milestone":"one"}` + "\n" + `{"phase":"p"}` + "\n" + `{"milestone":"two"}` + "\n", []string{"one", "two"}, "p", 0, 0},
		{"blank lines are skipped", "\n  \n" + `{"milestone":"m"}` + "\n", []string{"m"}, "", 0, 0},
		{"malformed lines", "nope\n[1]\n{\"fraction\":-0.5}\n\"str\"\n" + `{"milestone":"m"}` + "\n", []string{"m"}, "", 4, 0},
		{"fractions outside [0,1]", `{"phase":"ok","fraction":0.5}` + "\n" + `{"phase":"big","fraction":1.5}` + "\n" + `{"phase":"huge","fraction":1e308}` + "\n", nil, "ok", 2, 0},
		{"partial last line waits", `{"milestone":"m"}` + "\n" + `{"phase":"later"`, []string{"m"}, "", 0, len(`{"phase":"later"`)},
		{"over-long line", long(100<<10) + `{"milestone":"m"}` + "\n", []string{"m"}, "", 1, 0},
		{"line as long as a read", long(1<<20) + `{"milestone":"m"}` + "\n", []string{"m"}, "", 1, 0},
		{"line longer than several reads", long(5<<20+7) + `{"milestone":"m"}` + "\n" + long(70<<10), []string{"m"}, "", 2, 0},
		{"over-long line not ended yet", long(3 << 20)[:3<<20], nil, "", 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "progress.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(c.content), 0o600))
			milestones, last, malformed, to := readAll(t, path, 0)
			require.Equal(t, c.milestones, milestones)
			require.Equal(t, c.malformed, malformed)
			require.Equal(t, int64(len(c.content)-c.unread), to)
			if c.phase == "" {
				require.True(t, last == nil || last.Phase == "")
			} else {
				require.NotNil(t, last)
				require.Equal(t, c.phase, last.Phase)
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		t.Parallel()
		in, err := runner.ReadProgress(filepath.Join(t.TempDir(), "none"), 0)
		require.NoError(t, err)
		require.Equal(t, engine.ProgressInput{}, in)
	})

	t.Run("line finished after a read", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "progress.jsonl")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		require.NoError(t, err)
		defer f.Close()
		write := func(s string) {
			_, err := f.WriteString(s)
			require.NoError(t, err)
		}
		write(`{"milestone":"a"}` + "\n" + `{"milest`)
		ms, _, bad, to := readAll(t, path, 0)
		require.Equal(t, []string{"a"}, ms)
		require.Zero(t, bad)
		write(`one":"b"}` + "\n" + strings.Repeat("y", 200<<10))
		ms, _, bad, to = readAll(t, path, to)
		require.Equal(t, []string{"b"}, ms)
		require.Equal(t, 1, bad, "the over-long line counts once, written or not")
		write(strings.Repeat("y", 200<<10) + "\n" + `{"milestone":"c"}` + "\n")
		ms, _, bad, _ = readAll(t, path, to)
		require.Equal(t, []string{"c"}, ms)
		require.Zero(t, bad, "the rest of a counted line is not counted again")
	})
}

// TestProgressUsageLines: usage lines add up, leave the progress snapshot
// alone, and a negative value is skipped as malformed.
func TestProgressUsageLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "progress.jsonl")
	lines := strings.Join([]string{
		`{"fraction":0.5,"phase":"calling"}`,
		`{"usage":{"input_tokens":10,"output_tokens":5,"cost":0.1}}`,
		`{"usage":{"output_tokens":7}}`,
		`{"usage":{"cost":0.2}}`,
		`{"usage":{"input_tokens":-3}}`,
		`{"usage":{"cost":-1}}`,
		`{"usage":"lots"}`,
	}, "\n") + "\n"
	require.NoError(t, os.WriteFile(path, []byte(lines), 0o600))
	in, err := runner.ReadProgress(path, 0)
	require.NoError(t, err)
	require.Equal(t, 3, in.Malformed)
	require.Equal(t, "calling", in.Progress.Phase, "a usage line keeps the snapshot")
	require.Equal(t, int64(10), in.Usage.InputTokens)
	require.Equal(t, int64(12), in.Usage.OutputTokens)
	require.InDelta(t, 0.3, in.Usage.Cost, 1e-9)
	require.Equal(t, int64(2), in.Usage.TokenReports)
	require.Equal(t, int64(2), in.Usage.CostReports, "a report without a cost is not a zero cost")
}
