package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/errcode"
)

// Error codes of the HTTP/JSON API that name no sdk sentinel.
const (
	codeInternal         = "internal"
	codeNoRoute          = "no_route"
	codeMethodNotAllowed = "method_not_allowed"
)

// errorBody is every error answer: {"error": {...}}.
type errorBody struct {
	Error *errorJSON `json:"error"`
}

// errorJSON says what failed. Message is the error's text verbatim; Current
// and Expected are set only for revision_conflict; Flag and Rule only for
// invalid, when the error is a *apitype.FlagError (or the scheduler's
// *schedule.FlagError it stands for).
type errorJSON struct {
	Code     string    `json:"code"`
	Message  string    `json:"message"`
	Current  *sdk.Flow `json:"current,omitempty"`
	Expected *int64    `json:"expected,omitempty"`
	Flag     string    `json:"flag,omitempty"`
	Rule     string    `json:"rule,omitempty"`
}

// errorToWire returns the HTTP status and body that report err: the code
// and status of its sentinel in sdk/errcode (the table the plugin
// protocol uses too), or internal (500) when it matches none the API
// answers with. Refusals that depend on the record's current state are
// 409 Conflict.
func errorToWire(err error) (int, errorBody) {
	e := &errorJSON{Code: codeInternal, Message: err.Error()}
	status := http.StatusInternalServerError
	if c, ok := errcode.Of(err); ok && c.HTTP != 0 {
		e.Code, status = c.Name, c.HTTP
	}
	if rc, ok := errors.AsType[*sdk.RevisionConflictError](err); ok {
		e.Current, e.Expected = rc.Current, &rc.Expected
	}
	// A cron job's invalid input names the flag at fault; it is invalid
	// whichever sentinel it matches.
	if fe, ok := errors.AsType[*apitype.FlagError](flagErrorOf(err)); ok {
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
// for invalid with a flag, the *apitype.FlagError (matching
// sdk.ErrInvalid under errors.Is). An answer that is not an error
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
	if c, ok := errcode.Named(e.code); ok && c.HTTP != 0 {
		e.cause = c.Err
	}
	if e.cause == sdk.ErrRevisionConflict {
		rc := &sdk.RevisionConflictError{Current: b.Error.Current}
		if b.Error.Expected != nil {
			rc.Expected = *b.Error.Expected
		}
		e.cause = rc
	}
	if e.code == "invalid" && b.Error.Flag != "" {
		e.cause = &apitype.FlagError{Flag: b.Error.Flag, Rule: b.Error.Rule}
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
