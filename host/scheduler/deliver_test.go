package scheduler

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deliverReport is a finished, failed run with every field set.
func deliverReport() Report {
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	return Report{
		Event:             EventRunFinished,
		JobID:             "job-1",
		JobName:           "nightly report",
		RunID:             "cron:job-1:2026-03-02T10:00:00Z",
		Scheduled:         at,
		StartedAt:         at.Add(time.Second),
		EndedAt:           at.Add(time.Minute),
		Status:            RunError,
		Error:             "exit status 1",
		TaskID:            "task-7",
		FlowID:            "flow-9",
		Session:           "session:ops",
		ConsecutiveErrors: 3,
		Result:            json.RawMessage(`{"lines":["a","b"],"n":2}`),
	}
}

func TestDeliverWebhook(t *testing.T) {
	t.Parallel()
	full := deliverReport()
	minimal := Report{Event: EventFailureAlert, JobID: "job-2", JobName: "tiny", RunID: "cron:job-2:2026-03-02T10:00:00Z", Scheduled: full.Scheduled, Status: RunSkipped}
	cases := []struct {
		name string
		r    Report
		want map[string]any
	}{
		{"every field", full, map[string]any{
			"event":              "cron.run.finished",
			"job_id":             "job-1",
			"job_name":           "nightly report",
			"run_id":             "cron:job-1:2026-03-02T10:00:00Z",
			"scheduled":          "2026-03-02T10:00:00Z",
			"started_at":         "2026-03-02T10:00:01Z",
			"ended_at":           "2026-03-02T10:01:00Z",
			"status":             "error",
			"error":              "exit status 1",
			"task_id":            "task-7",
			"flow_id":            "flow-9",
			"session":            "session:ops",
			"consecutive_errors": float64(3),
			"result":             map[string]any{"lines": []any{"a", "b"}, "n": float64(2)},
		}},
		{"empty fields omitted", minimal, map[string]any{
			"event":              "cron.failure_alert",
			"job_id":             "job-2",
			"job_name":           "tiny",
			"run_id":             "cron:job-2:2026-03-02T10:00:00Z",
			"scheduled":          "2026-03-02T10:00:00Z",
			"status":             "skipped",
			"consecutive_errors": float64(0),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			type request struct {
				method string
				header http.Header
				body   map[string]any
			}
			got := make(chan request, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				var body map[string]any
				if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
					t.Errorf("decoding the body: %v", err)
				}
				got <- request{req.Method, req.Header.Clone(), body}
				w.WriteHeader(http.StatusAccepted)
			}))
			t.Cleanup(srv.Close)

			err := Deliver(t.Context(), Delivery{Kind: DeliveryWebhook, URL: srv.URL + "/hook"}, tc.r, DeliverOptions{})
			if err != nil {
				t.Fatalf("Deliver: %v", err)
			}
			req := <-got
			if req.method != http.MethodPost {
				t.Errorf("method = %s, want POST", req.method)
			}
			if !reflect.DeepEqual(req.body, tc.want) {
				t.Errorf("body =\n%#v\nwant\n%#v", req.body, tc.want)
			}
			for k, v := range map[string]string{
				"Content-Type":     "application/json",
				"User-Agent":       "flowgate-cron",
				"X-Flowgate-Event": tc.r.Event,
				"Idempotency-Key":  tc.r.RunID + "/" + tc.r.Event,
			} {
				if h := req.header.Get(k); h != v {
					t.Errorf("header %s = %q, want %q", k, h, v)
				}
			}
		})
	}
}

func TestDeliverWebhookFailingEndpoint(t *testing.T) {
	t.Parallel()
	noisy := "\x1b[31mboom\r\nline two" + strings.Repeat("x", 100<<10)
	cases := []struct {
		name, body string
		want       []string
	}{
		{"500", "boom", []string{"500 Internal Server Error", ": boom"}},
		{"long body with control characters", noisy, []string{"500", "[31mboom  line two"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)

			err := Deliver(t.Context(), Delivery{Kind: DeliveryWebhook, URL: srv.URL}, deliverReport(), DeliverOptions{})
			if err == nil {
				t.Fatal("Deliver returned nil for a 500 answer")
			}
			msg := err.Error()
			for _, w := range append(tc.want, srv.URL) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if strings.ContainsFunc(msg, func(r rune) bool { return r < ' ' }) {
				t.Errorf("error %q holds control characters", msg)
			}
			if n := strings.Count(msg, "x"); n > deliverShow {
				t.Errorf("error shows %d bytes of the body, want at most %d", n, deliverShow)
			}
		})
	}
}

// hangUntilGone answers nothing until the client goes away. It reads the
// body first: only then does the server watch the connection and cancel
// the request's context when the client closes it.
func hangUntilGone(_ http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	<-req.Context().Done()
}

func TestDeliverWebhookUnreachable(t *testing.T) {
	t.Parallel()
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(hangUntilGone))
		t.Cleanup(srv.Close)
		err := Deliver(t.Context(), Delivery{Kind: DeliveryWebhook, URL: srv.URL}, deliverReport(), DeliverOptions{Timeout: 200 * time.Millisecond})
		wantDeliverErr(t, err, srv.URL, "timed out after 200ms")
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(hangUntilGone))
		t.Cleanup(srv.Close)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := Deliver(ctx, Delivery{Kind: DeliveryWebhook, URL: srv.URL}, deliverReport(), DeliverOptions{})
		wantDeliverErr(t, err, srv.URL)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("errors.Is(%v, context.Canceled) = false", err)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
		err = Deliver(t.Context(), Delivery{Kind: DeliveryWebhook, URL: "http://" + addr + "/hook"}, deliverReport(), DeliverOptions{})
		wantDeliverErr(t, err, "http://"+addr+"/hook")
	})
	t.Run("redirect to another scheme", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			http.Redirect(w, req, "file:///etc/passwd", http.StatusTemporaryRedirect)
		}))
		t.Cleanup(srv.Close)
		err := Deliver(t.Context(), Delivery{Kind: DeliveryWebhook, URL: srv.URL}, deliverReport(), DeliverOptions{})
		wantDeliverErr(t, err, srv.URL, "refusing a redirect to file:///etc/passwd")
	})
}

func TestDeliverCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := deliverReport()

	report := filepath.Join(dir, "report.json")
	err := Deliver(t.Context(), Delivery{Kind: DeliveryCommand, Command: `echo to-stdout; cat > "$OUT"`}, r, DeliverOptions{Env: []string{"OUT=" + report}})
	if err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var got Report
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("stdin %q is not a Report: %v", b, err)
	}
	if !got.Scheduled.Equal(r.Scheduled) || !got.StartedAt.Equal(r.StartedAt) || !got.EndedAt.Equal(r.EndedAt) {
		t.Errorf("times = %v %v %v, want %v %v %v", got.Scheduled, got.StartedAt, got.EndedAt, r.Scheduled, r.StartedAt, r.EndedAt)
	}
	want, _ := json.Marshal(r)
	again, _ := json.Marshal(got)
	if !bytes.Equal(again, want) {
		t.Errorf("stdin decodes to\n%s\nwant\n%s", again, want)
	}

	// The FLOWGATE_CRON_* variables win over a forged one in Env.
	env := filepath.Join(dir, "env.txt")
	err = Deliver(t.Context(), Delivery{Kind: DeliveryCommand, Command: `printf '%s\n' "$FLOWGATE_CRON_EVENT" "$FLOWGATE_CRON_JOB_ID" "$FLOWGATE_CRON_JOB_NAME" "$FLOWGATE_CRON_RUN_ID" "$FLOWGATE_CRON_STATUS" > "$OUT"`},
		r, DeliverOptions{Env: []string{"OUT=" + env, "FLOWGATE_CRON_STATUS=forged"}})
	if err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	b, err = os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	wantEnv := strings.Join([]string{r.Event, r.JobID, r.JobName, r.RunID, r.Status}, "\n") + "\n"
	if string(b) != wantEnv {
		t.Errorf("environment = %q, want %q", b, wantEnv)
	}
}

func TestDeliverCommandFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, command string
		want          []string
	}{
		{"exit status", `echo nope >&2; exit 3`, []string{"exit status 3", "stderr: nope", `"echo nope >&2; exit 3"`}},
		{"killed by a signal", `kill -9 $$`, []string{"signal: killed"}},
		{"stderr flood keeps the end", `head -c 300000 /dev/zero | tr '\0' x >&2; echo last words >&2; exit 1`, []string{"exit status 1", "last words"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Deliver(t.Context(), Delivery{Kind: DeliveryCommand, Command: tc.command}, deliverReport(), DeliverOptions{})
			wantDeliverErr(t, err, tc.want...)
			if err != nil && len(err.Error()) > len(tc.command)+300 {
				t.Errorf("error is %d bytes long; stderr is not bounded to %d", len(err.Error()), deliverShow)
			}
		})
	}
}

func TestDeliverCommandTimeout(t *testing.T) {
	t.Parallel()
	err := Deliver(t.Context(), Delivery{Kind: DeliveryCommand, Command: `sleep 30`}, deliverReport(), DeliverOptions{Timeout: 200 * time.Millisecond})
	wantDeliverErr(t, err, `"sleep 30"`, "timed out after 200ms")
}

// TestDeliverCommandKillsProcessGroup checks that a timeout or a cancel
// kills what the command started in the background, not only the shell.
func TestDeliverCommandKillsProcessGroup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		timeout time.Duration
		want    string
	}{
		// A second, rather than 200ms, so the shell surely reports the pid
		// before the timeout; the test reads the pid, it does not sleep.
		{"timeout", time.Second, "timed out after 1s"},
		{"cancel", time.Minute, "context canceled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fifo := filepath.Join(t.TempDir(), "pid")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			// Read-write, so opening does not wait for the command; a read
			// deadline fails the test rather than hanging it.
			f, err := os.OpenFile(fifo, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				done <- Deliver(ctx, Delivery{Kind: DeliveryCommand, Command: `sleep 30 & echo $! > "$PIDFIFO"; wait`},
					deliverReport(), DeliverOptions{Timeout: tc.timeout, Env: []string{"PIDFIFO=" + fifo}})
			}()
			line, err := bufio.NewReader(f).ReadString('\n')
			if err != nil {
				t.Fatalf("reading the background pid: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "cancel" {
				cancel()
			}
			wantDeliverErr(t, <-done, tc.want)
			waitDead(t, pid)
		})
	}
}

// waitDead waits up to 5s for pid to be gone or a zombie. Who reaps it is
// not Deliver's business: the killed shell's orphan is reparented.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err == nil {
			// The state follows the command name, which is in parentheses.
			if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("background process %d still alive 5s after Deliver returned: %s", pid, stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDeliverBadInput(t *testing.T) {
	t.Parallel()
	badResult := deliverReport()
	badResult.Result = json.RawMessage(`{not json`)
	badHeader := deliverReport()
	badHeader.RunID = "cron:job-1\r\nX-Injected: 1"
	var nilCtx context.Context
	cases := []struct {
		name string
		ctx  context.Context
		d    Delivery
		r    Report
		want string // empty means no error
	}{
		{"zero kind", t.Context(), Delivery{}, deliverReport(), ""},
		{"none", t.Context(), Delivery{Kind: DeliveryNone, URL: "http://ignored"}, deliverReport(), ""},
		{"nil context", nilCtx, Delivery{Kind: DeliveryNone}, deliverReport(), ""},
		{"unknown kind", t.Context(), Delivery{Kind: "carrier-pigeon"}, deliverReport(), `"carrier-pigeon" is unknown`},
		{"empty URL", t.Context(), Delivery{Kind: DeliveryWebhook}, deliverReport(), "not an http or https URL"},
		{"ftp URL", t.Context(), Delivery{Kind: DeliveryWebhook, URL: "ftp://example.com/x"}, deliverReport(), "not an http or https URL"},
		{"password kept out of the message", t.Context(), Delivery{Kind: DeliveryWebhook, URL: "ftp://user:secret@example.com/x"}, deliverReport(), `"ftp://user:xxxxx@example.com/x" is not an http or https URL`},
		{"URL without host", t.Context(), Delivery{Kind: DeliveryWebhook, URL: "http:///x"}, deliverReport(), "not an http or https URL"},
		{"unparsable URL", t.Context(), Delivery{Kind: DeliveryWebhook, URL: "http://[::1"}, deliverReport(), "not an http or https URL"},
		{"invalid result JSON", t.Context(), Delivery{Kind: DeliveryWebhook, URL: "http://127.0.0.1:1/"}, badResult, "encoding the report"},
		{"control characters in a header", t.Context(), Delivery{Kind: DeliveryWebhook, URL: "http://127.0.0.1:1/"}, badHeader, "Idempotency-Key"},
		{"empty command", t.Context(), Delivery{Kind: DeliveryCommand, Command: " "}, deliverReport(), "notify command is empty"},
		{"command, invalid result JSON", t.Context(), Delivery{Kind: DeliveryCommand, Command: "true"}, badResult, "encoding the report"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Deliver(tc.ctx, tc.d, tc.r, DeliverOptions{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Deliver: %v", err)
				}
				return
			}
			wantDeliverErr(t, err, tc.want)
		})
	}
}

func TestDeliverTailBuffer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		writes []string
		want   string
	}{
		{"under the limit", []string{"ab", "cd"}, "abcd"},
		{"overflow drops the oldest", []string{"abc", "def", "gh"}, "defgh"},
		{"one write over the limit", []string{"a", "0123456789"}, "56789"},
	}
	for _, tc := range cases {
		b := &tailBuffer{max: 5}
		for _, w := range tc.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("%s: Write(%q) = %d, %v", tc.name, w, n, err)
			}
		}
		if got := string(b.Bytes()); got != tc.want {
			t.Errorf("%s: kept %q, want %q", tc.name, got, tc.want)
		}
	}
}

// wantDeliverErr fails the test unless err is non-nil and its message holds every
// one of parts.
func wantDeliverErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}
