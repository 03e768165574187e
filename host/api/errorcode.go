package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/sdk"
)

// Error codes of the HTTP/JSON API that name no sdk sentinel.
const (
	codeInternal         = "internal"
	codeNoRoute          = "no_route"
	codeMethodNotAllowed = "method_not_allowed"
)

// errorCode ties an sdk sentinel to its code on the wire and its HTTP
// status.
type errorCode struct {
	code     string
	sentinel error
	status   int
}

// errorCodes is the one table both directions use: the handler answers an
// error with the first entry it matches (errors.Is), and Remote turns a
// code back into that entry's sentinel. An error that matches none is
// internal (500). Refusals that depend on the record's current state are
// 409 Conflict. Read-only.
var errorCodes = []errorCode{
	{"revision_conflict", sdk.ErrRevisionConflict, http.StatusConflict},
	{"not_found", sdk.ErrNotFound, http.StatusNotFound},
	{"invalid", sdk.ErrInvalid, http.StatusBadRequest},
	{"terminal", sdk.ErrTerminal, http.StatusConflict},
	{"cancel_requested", sdk.ErrCancelRequested, http.StatusConflict},
	{"not_managed", sdk.ErrNotManaged, http.StatusConflict},
	{"owner_mismatch", sdk.ErrOwnerMismatch, http.StatusConflict},
	{"illegal_transition", sdk.ErrIllegalTransition, http.StatusConflict},
}

// errorBody is every error answer: {"error": {...}}.
type errorBody struct {
	Error *errorJSON `json:"error"`
}

// errorJSON says what failed. Message is the error's text verbatim; Current
// and Expected are set only for revision_conflict; Flag and Rule only for
// invalid, when the error is a *schedule.FlagError.
type errorJSON struct {
	Code     string    `json:"code"`
	Message  string    `json:"message"`
	Current  *sdk.Flow `json:"current,omitempty"`
	Expected *int64    `json:"expected,omitempty"`
	Flag     string    `json:"flag,omitempty"`
	Rule     string    `json:"rule,omitempty"`
}

// errorToWire returns the HTTP status and body that report err.
func errorToWire(err error) (int, errorBody) {
	e := &errorJSON{Code: codeInternal, Message: err.Error()}
	status := http.StatusInternalServerError
	for _, c := range errorCodes {
		if errors.Is(err, c.sentinel) {
			e.Code, status = c.code, c.status
			break
		}
	}
	if rc, ok := errors.AsType[*sdk.RevisionConflictError](err); ok {
		e.Current, e.Expected = rc.Current, &rc.Expected
	}
	// A cron job's invalid input names the flag at fault; it is invalid
	// whichever sentinel it matches.
	if fe, ok := errors.AsType[*schedule.FlagError](err); ok {
		e.Code, status = "invalid", http.StatusBadRequest
		e.Flag, e.Rule = fe.Flag, fe.Rule
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		status = http.StatusRequestEntityTooLarge
	}
	return status, errorBody{Error: e}
}

// errorFromWire turns an error answer back into an error: its message
// verbatim, matching the sentinel its code names under errors.Is, a
// *sdk.RevisionConflictError with the current flow under errors.As, and,
// for invalid with a flag, the *schedule.FlagError (matching under
// errors.Is whatever a FlagError matches). An answer that is not an error
// body becomes an error naming the status.
func errorFromWire(status int, body []byte) error {
	var b errorBody
	if err := json.Unmarshal(body, &b); err != nil || b.Error == nil || b.Error.Message == "" {
		text := strings.TrimSpace(string(body))
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		return fmt.Errorf("gateway answered %d %s: %q", status, http.StatusText(status), text)
	}
	e := &remoteError{msg: b.Error.Message, code: b.Error.Code}
	for _, c := range errorCodes {
		if c.code == e.code {
			e.cause = c.sentinel
			break
		}
	}
	if e.cause == sdk.ErrRevisionConflict {
		rc := &sdk.RevisionConflictError{Current: b.Error.Current}
		if b.Error.Expected != nil {
			rc.Expected = *b.Error.Expected
		}
		e.cause = rc
	}
	if e.code == "invalid" && b.Error.Flag != "" {
		e.cause = &schedule.FlagError{Flag: b.Error.Flag, Rule: b.Error.Rule}
	}
	return e
}

// remoteError is an error the gateway reported. It prints the gateway's
// message as it was and unwraps to the sentinel (or typed error) its code
// names, or to nothing for an internal error.
type remoteError struct {
	msg   string
	code  string
	cause error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.cause }
