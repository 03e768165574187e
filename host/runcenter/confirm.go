package runcenter

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/errcode"
)

// confirmPage is an action's confirmation step: a page of its own, drawn
// by a GET, holding the POST form that does the action. It needs no
// script, so an action is confirmed the same way with JavaScript off;
// and a refusal draws the same page again with the problem above the
// form, so nothing the person typed is lost.
type confirmPage struct {
	// Heading asks the question ("Continue flow …?"); What says in one
	// sentence what the action will do.
	Heading, What string
	// Goal is the flow's goal, for an action on a flow: what the person
	// acts on, in the words of whoever started it.
	Goal string
	// Post is the form's action; Back the page to return to unchanged.
	Post, Back string
	// Button is the confirming button's text; Danger draws it red.
	Button string
	Danger bool
	// Revision, when not zero, is the flow's revision the page read: the
	// engine refuses the action if the flow has moved on since.
	Revision int64
	// Reason, when AskReason, is the continuation's reason field.
	AskReason bool
	Reason    string
	// Steps, when not empty, are the plan steps a rerun may start from;
	// FromStep is the one chosen.
	Steps    []string
	FromStep string
	// Range, when set, asks a backfill's from and to times, read in Zone.
	Range    bool
	From, To string
	Zone     string
	// Problem is why the engine refused the action the last time it was
	// sent; nothing changed.
	Problem string
}

// showConfirm draws page p with status: 200 for the question, the
// refusal's own status when the action was refused. It never follows
// /pulse: a redraw would wipe what the person types.
func (s *Server) showConfirm(w http.ResponseWriter, r *http.Request, status int, p confirmPage) {
	s.render(w, "confirm", "layout", status, s.newView(r, "", p.Heading, p))
}

// refused draws p again with why err refused the action, in plain words,
// and the status err has in the API (409 for a flow that moved on, 400
// for an illegal move). An error that is no refusal (the store failing)
// is logged, as every failed request is.
func (s *Server) refused(w http.ResponseWriter, r *http.Request, p confirmPage, err error) {
	status := http.StatusInternalServerError
	if c, ok := errcode.Of(err); ok && c.HTTP != 0 {
		status = c.HTTP
	}
	if status >= 500 {
		s.cfg.Logger.Error("run center action failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	p.Problem = plainRefusal(err)
	s.showConfirm(w, r, status, p)
}

// plainRefusal says why err refused an action and that nothing changed.
// A revision conflict says what the flow is now, since whoever lost the
// race needs to see what moved it before trying again.
func plainRefusal(err error) string {
	if c, ok := errors.AsType[*sdk.RevisionConflictError](err); ok && c.Current != nil {
		return fmt.Sprintf("Nothing was done: the flow changed since this page was drawn (it is now %s, at revision %d, not %d). "+
			"Go back to the flow to see what changed, and try again if the action still applies.", c.Current.Status, c.Current.Revision, c.Expected)
	}
	return "Nothing was done: " + err.Error()
}
