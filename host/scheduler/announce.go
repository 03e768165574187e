package scheduler

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

// Bounds of Report.Output: what an announcement shows of a command's
// stdout, enough for a chat message and never a whole log.
const (
	OutputLines = 20
	OutputBytes = 4 << 10
)

// ReportMessage is r as Deliver sends it to a webhook or a command: its
// JSON, with the event and the idempotency key "<run id>/<event>". A
// Destinations uses it for http(s) and cmd: destinations, so that they
// get what --webhook and --notify-command get.
func ReportMessage(r Report) (Message, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return Message{}, fmt.Errorf("encoding the report of run %s: %w", r.RunID, err)
	}
	return Message{
		Event: r.Event, Key: r.RunID + "/" + r.Event, Body: body, Agent: "flowgate-cron",
		Env: []string{
			"FLOWGATE_CRON_EVENT=" + r.Event,
			"FLOWGATE_CRON_JOB_ID=" + r.JobID,
			"FLOWGATE_CRON_JOB_NAME=" + r.JobName,
			"FLOWGATE_CRON_RUN_ID=" + r.RunID,
			"FLOWGATE_CRON_STATUS=" + r.Status,
		},
	}, nil
}

// stdoutTail is the end of a task's stdout as its result keeps it (the
// whole output, or the file that holds it when it was large): at most
// OutputLines lines and OutputBytes bytes, cut at a line start. A file
// that cannot be read gives what the record has, the empty string.
func stdoutTail(res *sdk.Result) string {
	out := res.Stdout
	if out == "" && res.StdoutPath != "" {
		out, _ = runner.ReadTail(res.StdoutPath, OutputBytes)
	}
	out = strings.TrimRight(out, "\n")
	if len(out) > OutputBytes {
		out = out[len(out)-OutputBytes:]
		if i := strings.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	if lines := strings.Split(out, "\n"); len(lines) > OutputLines {
		out = strings.Join(lines[len(lines)-OutputLines:], "\n")
	}
	return strings.ToValidUTF8(out, "\uFFFD")
}
