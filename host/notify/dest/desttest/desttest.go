// Package desttest gives tests real destinations to send to: a loopback
// HTTP server that records what it is sent (for https://, generic+http://
// and ntfy://…?scheme=http destinations) and a small SMTP server without
// TLS or auth (for smtp://…/?auth=none&encryption=none&usestarttls=no).
// Both stop when the test ends.
package desttest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Post is one request a Receiver got.
type Post struct {
	Path, Query string
	// Key is the Idempotency-Key header.
	Key  string
	Body string
}

// Receiver is a loopback HTTP server that records each request and
// answers the first Fail of them 503 (quoting the request's URL, as some
// services do in errors, so a test sees whether a secret would leak
// through an answer), then 200 with "{}" (ntfy reads a JSON answer).
type Receiver struct {
	*httptest.Server
	mu    sync.Mutex
	posts []Post
	fail  int
}

// NewReceiver starts a Receiver that fails the first fail requests.
func NewReceiver(t testing.TB, fail int) *Receiver {
	t.Helper()
	r := &Receiver{fail: fail}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.posts = append(r.posts, Post{Path: req.URL.Path, Query: req.URL.RawQuery, Key: req.Header.Get("Idempotency-Key"), Body: string(b)})
		if len(r.posts) <= r.fail {
			http.Error(w, "busy: "+req.URL.String(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(r.Close)
	return r
}

// Posts returns the requests so far, oldest first.
func (r *Receiver) Posts() []Post {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Post(nil), r.posts...)
}

// Host is the receiver's host:port.
func (r *Receiver) Host() string { return strings.TrimPrefix(r.URL, "http://") }

// SMTPSink is a minimal SMTP server on loopback, without TLS or auth,
// that hands each message it accepts (headers and body, as sent) to Got.
type SMTPSink struct {
	ln net.Listener
	// Got receives each message; it holds up to 16 unread.
	Got chan string
}

// NewSMTPSink starts an SMTPSink.
func NewSMTPSink(t testing.TB) *SMTPSink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen for SMTP: %v", err)
	}
	s := &SMTPSink{ln: ln, Got: make(chan string, 16)}
	t.Cleanup(func() { _ = ln.Close() })
	go s.serve()
	return s
}

// Addr is the sink's host:port.
func (s *SMTPSink) Addr() string { return s.ln.Addr().String() }

// URL is an smtp:// destination for the sink, from and to the given
// addresses, without TLS or auth.
func (s *SMTPSink) URL(from, to string) string {
	return "smtp://" + s.Addr() + "/?from=" + from + "&to=" + to + "&auth=none&encryption=none&usestarttls=no"
}

// serve answers one session after another.
func (s *SMTPSink) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.session(c)
	}
}

// session speaks the SMTP a client without TLS or auth needs: EHLO,
// MAIL, RCPT, DATA, QUIT.
func (s *SMTPSink) session(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(line string) { _, _ = c.Write([]byte(line + "\r\n")) }
	say("220 sink ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"):
			say("250-sink")
			say("250 8BITMIME")
		case strings.HasPrefix(cmd, "HELO"), strings.HasPrefix(cmd, "MAIL"), strings.HasPrefix(cmd, "RCPT"),
			strings.HasPrefix(cmd, "RSET"), strings.HasPrefix(cmd, "NOOP"):
			say("250 ok")
		case cmd == "DATA":
			say("354 go on")
			msg, ok := readData(r)
			if !ok {
				return
			}
			select {
			case s.Got <- msg:
			default:
			}
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("502 not here")
		}
	}
}

// readData reads a DATA section up to its lone ".", undoing dot
// stuffing.
func readData(r *bufio.Reader) (string, bool) {
	var msg strings.Builder
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			return "", false
		}
		if l == ".\r\n" || l == ".\n" {
			return msg.String(), true
		}
		msg.WriteString(strings.TrimPrefix(l, "."))
	}
}
