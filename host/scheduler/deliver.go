package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/flowgate/flowgate/host/shell"
)

// Delivery events, sent as Report.Event and the X-Flowgate-Event header.
const (
	// EventRunFinished reports a run that has ended, well or not.
	EventRunFinished = "cron.run.finished"
	// EventFailureAlert reports a job that has failed often enough in a
	// row to raise an alert (see AlertDue).
	EventFailureAlert = "cron.failure_alert"
)

// Report is what a delivery sends about a run: the JSON body of a webhook
// POST, and the stdin of a notify command.
type Report struct {
	Event   string `json:"event"`
	JobID   string `json:"job_id"`
	JobName string `json:"job_name"`
	// RunID names the run: "cron:<job-id>:<scheduled RFC 3339>". With Event
	// it makes the Idempotency-Key a receiver dedupes on.
	RunID     string    `json:"run_id"`
	Scheduled time.Time `json:"scheduled"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// Status is the run's status: ok, error, cancelled, skipped, missed or
	// interrupted.
	Status            string `json:"status"`
	Error             string `json:"error,omitempty"`
	TaskID            string `json:"task_id,omitempty"`
	FlowID            string `json:"flow_id,omitempty"`
	Session           string `json:"session,omitempty"`
	ConsecutiveErrors int    `json:"consecutive_errors"`
	// Result is the task's result or the pipeline's output, as stored. It
	// must be valid JSON or empty.
	Result json.RawMessage `json:"result,omitempty"`
	// Output is the end of a command run's stdout: at most OutputLines
	// lines and OutputBytes bytes, what an announcement shows.
	Output string `json:"output,omitempty"`
}

// DefaultDeliveryTimeout bounds one delivery attempt when
// DeliverOptions.Timeout is zero.
const DefaultDeliveryTimeout = 10 * time.Second

// DeliverOptions tunes Deliver. The zero value is ready to use.
type DeliverOptions struct {
	// Timeout bounds one attempt: the whole webhook exchange, or the notify
	// command's run. Zero or less means DefaultDeliveryTimeout.
	Timeout time.Duration
	// Client sends webhooks. Nil means a client with Timeout, no cookie jar,
	// and redirects followed only to http and https. A caller's client still
	// gets Timeout, through the request's context.
	Client *http.Client
	// Env is extra environment for a command delivery, as KEY=VALUE. The
	// FLOWGATE_CRON_* variables Deliver sets win over it.
	Env []string
}

// Limits on what a delivery keeps of its peer's output, so a chatty or
// hostile receiver cannot make the scheduler hold unbounded memory.
const (
	// deliverKeep is how much of a webhook answer or of a command's stderr
	// is read and kept.
	deliverKeep = 64 << 10
	// deliverShow is how much of it an error message shows.
	deliverShow = 200
	// killGrace is how long a command's stderr may stay open after the
	// command exits or is killed, before Deliver stops reading it.
	killGrace = time.Second
)

// Deliver sends r to d once and reports whether it got there. DeliveryNone
// (or a zero Kind) does nothing and returns nil. Delivery is at least once:
// a caller that retries sends the same Idempotency-Key (webhook) or
// FLOWGATE_CRON_RUN_ID and FLOWGATE_CRON_EVENT (command), so receivers can
// dedupe.
//
// A webhook is POSTed r as JSON and succeeds on any 2xx answer; other
// answers, network errors and timeouts are errors naming the URL and what
// happened, with the start of the answer's body. A command runs through
// /bin/sh -c with r as JSON on stdin, in its own process group, which is
// killed whole on timeout or when ctx is done; exit status 0 is success,
// and anything else is an error naming the command and status, with the
// end of its stderr. Its stdout is discarded. An unknown Kind is an error.
func Deliver(ctx context.Context, d Delivery, r Report, o DeliverOptions) error {
	m, err := ReportMessage(r)
	if err != nil {
		return err
	}
	return Send(ctx, d, m, o)
}

// Message is one notification as Send delivers it.
type Message struct {
	// Event is sent as the X-Flowgate-Event header.
	Event string
	// Key is sent as the Idempotency-Key header: the same for every
	// attempt of one notification, so a receiver can dedupe.
	Key string
	// Body is the JSON POSTed to a webhook or fed to a command's stdin.
	Body []byte
	// Agent is the User-Agent of a webhook request.
	Agent string
	// Env is added to a command's environment after DeliverOptions.Env,
	// so it wins.
	Env []string
}

// Send delivers m to d once, as Deliver does a report (see Deliver for
// what counts as delivered and what an error says). It is how other
// parts of the host (task finish notifications) share the scheduler's
// delivery.
func Send(ctx context.Context, d Delivery, m Message, o DeliverOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultDeliveryTimeout
	}
	switch d.Kind {
	case "", DeliveryNone:
		return nil
	case DeliveryWebhook:
		return deliverWebhook(ctx, d.URL, m, o)
	case DeliveryCommand:
		return deliverCommand(ctx, d.Command, m, o)
	default:
		return fmt.Errorf("delivery kind %q is unknown; use %q, %q or %q", d.Kind, DeliveryNone, DeliveryWebhook, DeliveryCommand)
	}
}

func deliverWebhook(ctx context.Context, rawURL string, m Message, o DeliverOptions) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("webhook URL %q is not an http or https URL", rawURL)
	}
	// Messages name the URL without its password, since errors are logged
	// and stored.
	where := u.Redacted()
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("webhook URL %q is not an http or https URL", where)
	}
	actx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, rawURL, bytes.NewReader(m.Body))
	if err != nil {
		return fmt.Errorf("webhook %s: %w", where, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", m.Agent)
	req.Header.Set("X-Flowgate-Event", m.Event)
	req.Header.Set("Idempotency-Key", m.Key)
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: o.Timeout, CheckRedirect: webRedirectOnly}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", where, attemptErr(ctx, actx, o.Timeout, unwrapURLError(err)))
	}
	defer resp.Body.Close()
	// Reading what is left (up to the limit) lets the connection be reused.
	answer, readErr := io.ReadAll(io.LimitReader(resp.Body, deliverKeep))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	msg := fmt.Sprintf("webhook %s answered %s", where, statusText(resp.StatusCode))
	if s := printable(answer[:min(len(answer), deliverShow)]); s != "" {
		msg += ": " + s
	} else if readErr != nil {
		msg += " (reading the body: " + attemptErr(ctx, actx, o.Timeout, readErr).Error() + ")"
	}
	return errors.New(msg)
}

// webRedirectOnly is the default client's redirect policy: Go's limit of
// ten, and never to a scheme other than http or https.
func webRedirectOnly(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("refusing a redirect to %s: not http or https", req.URL.Redacted())
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the
// method and URL the caller's message already names.
func unwrapURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// attemptErr says why an attempt under actx, a child of ctx with timeout,
// failed: the caller's cancellation (which errors.Is matches), the
// attempt's own timeout, or err.
func attemptErr(ctx, actx context.Context, timeout time.Duration, err error) error {
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case actx.Err() != nil:
		return fmt.Errorf("timed out after %s", timeout)
	}
	// A client's own Timeout can fire just before actx does.
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return fmt.Errorf("timed out: %w", err)
	}
	return err
}

// statusText is "500 Internal Server Error", or just the code when Go does
// not know its text.
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return strconv.Itoa(code)
}

// printable makes peer output safe to put in an error message: invalid
// UTF-8 and control characters (newlines, escapes) become spaces or U+FFFD,
// and surrounding space is trimmed.
func printable(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

func deliverCommand(ctx context.Context, command string, m Message, o DeliverOptions) error {
	if strings.TrimSpace(command) == "" {
		return errors.New("notify command is empty; give a command line")
	}
	actx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	stderr := &tailBuffer{max: deliverKeep}
	// Its own process group, so a timeout kills what the command started
	// too, not only the shell.
	cmd := shell.Command(actx, command, killGrace)
	cmd.Stdin = bytes.NewReader(m.Body)
	cmd.Stderr = stderr
	cmd.Env = append(append(cmd.Env, o.Env...), m.Env...)
	err := cmd.Run()
	if err == nil || (errors.Is(err, exec.ErrWaitDelay) && actx.Err() == nil) {
		// ErrWaitDelay alone means the command exited 0 but something it
		// left running still holds stderr open; the delivery is done.
		return nil
	}
	if _, exited := errors.AsType[*exec.ExitError](err); !exited || actx.Err() != nil {
		err = attemptErr(ctx, actx, o.Timeout, err)
	}
	err = fmt.Errorf("notify command %q: %w", command, err)
	tail := stderr.Bytes()
	if s := printable(tail[max(0, len(tail)-deliverShow):]); s != "" {
		err = fmt.Errorf("%w; stderr: %s", err, s)
	}
	return err
}

// tailBuffer is an io.Writer that keeps the last max bytes written to it
// and drops the rest, so a command's stderr costs bounded memory.
type tailBuffer struct {
	max int
	buf []byte
}

// Write keeps the end of p and always reports it all written, so the
// command is never stopped by a short write.
func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// Bytes returns the bytes kept, oldest first.
func (t *tailBuffer) Bytes() []byte { return t.buf }
