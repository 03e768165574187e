package api

import (
	"bytes"
	"net/http"
	"sync/atomic"
)

// heldBody is a request body sent only once the gateway takes it: the
// request asks "Expect: 100-continue", and the gateway's server says
// "100 Continue" when its handler starts to read the body, which every
// handler that changes a record does before it changes anything. A
// gateway that goes away before that (it was stopping: it closed the
// connection, or never accepted it) cannot have acted on the request, so
// a call whose body was never taken may be sent to the next gateway, where
// otherwise its outcome would be unknown.
type heldBody struct {
	r     *bytes.Reader
	n     int64
	taken atomic.Bool
}

// attach makes b the body of req, sent once the gateway asks for it.
func (b *heldBody) attach(req *http.Request) {
	req.Body, req.ContentLength = b, b.n
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
}

func (b *heldBody) Read(p []byte) (int, error) {
	b.taken.Store(true)
	return b.r.Read(p)
}

func (b *heldBody) Close() error { return nil }
