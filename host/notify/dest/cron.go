package dest

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/scheduler"
)

// CronDests is the scheduler's Destinations over a Book: a cron job's
// announcements and failure alerts reach a chat or mail destination as
// the text the default template writes from the run's notice (status and
// job, duration, error, the pipeline's output or the command's last
// stdout lines), and an http(s) or cmd: destination as the cron Report
// JSON its --webhook or --notify-command gets, under the same
// idempotency key ("<run id>/<event>").
type CronDests struct {
	// Book resolves and sends to the specs; it must not be nil.
	Book *Book
	// Now is the clock for a run's duration; if nil, time.Now.
	Now func() time.Time
	// Logger hears a template that failed (the default text was sent
	// instead); if nil, nothing is logged.
	Logger hclog.Logger
}

var _ scheduler.Destinations = CronDests{}

// CronTemplate is the text of a cron announcement: the default notice
// text, then the run's output, which is what an announcement is for.
const CronTemplate = DefaultTemplate + `
{{- with .Output}}
Output:
{{.}}{{if $.Truncated}}
…{{end}}{{end}}`

// cronTemplate is CronTemplate, parsed once.
var cronTemplate = func() *Template {
	t, err := ParseTemplate(CronTemplate)
	if err != nil {
		panic(err)
	}
	return t
}()

// Check validates spec as a job's flag value: its shape, no literal
// secret, and a name the Book knows.
func (c CronDests) Check(spec string) error { return c.Book.Check(spec) }

// SendReport sends r to spec once.
func (c CronDests) SendReport(ctx context.Context, spec string, r scheduler.Report) error {
	m, err := scheduler.ReportMessage(r)
	if err != nil {
		return err
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	n := cronNotice(r, now())
	text, terr := cronTemplate.Render(n)
	if terr != nil && c.Logger != nil {
		c.Logger.Warn("cron announcement template failed", "job", r.JobID, "error", terr)
	}
	return c.Book.Send(ctx, spec, Message{Notice: n, Text: text, Raw: &m})
}

// cronNotice is the notice of a cron report, as a template sees it.
func cronNotice(r scheduler.Report, now time.Time) Notice {
	n := Notice{
		Key: r.RunID + "/" + r.Event, Event: r.Event, Status: r.Status, Job: r.JobName,
		FlowID: r.FlowID, TaskID: r.TaskID, Error: r.Error,
	}
	if r.Event == scheduler.EventFailureAlert {
		n.Error = fmt.Sprintf("%d failed runs in a row; the last: %s", r.ConsecutiveErrors, r.Error)
	}
	n.SetTimes(r.StartedAt, r.EndedAt, now)
	switch {
	case r.Output != "":
		n.SetOutput([]byte(r.Output))
	case r.FlowID != "" && len(r.Result) > 0:
		n.SetOutput(r.Result)
	}
	return n
}
