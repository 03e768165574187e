package flows

import (
	"context"
	"math"
	"strings"
)

// emailTriageCommand is Lobster's email.triage in its deterministic mode:
// it reads up to --limit messages (as gog.gmail.search or any other
// source prints them), normalises each and buckets them by their subject
// and UNREAD label. It calls nothing; Lobster's --llm mode, which asks
// llm.invoke instead, is not read (see docs/pipelines.md).
var emailTriageCommand = &Command{
	Name:        "email.triage",
	Description: "Bucket emails into needs-reply, needs-action and FYI: email.triage [--limit N] [--emit report|drafts] → {summary, buckets, emails, mode}",
	Run: func(_ context.Context, call *Call) (StageOutput, error) {
		limit := 20.0
		if v, ok := call.Args.Named["limit"]; ok {
			limit = jsToNumber(v)
		}
		emit := "report"
		if v, ok := call.Args.Named["emit"]; ok {
			if s := strings.TrimSpace(jsString(v)); s != "" {
				emit = s
			}
		}
		var emails []*Object
		for _, item := range call.Items {
			emails = append(emails, normalizeEmail(item))
			// As in Lobster, the count is checked after a message is
			// taken, so --limit 0 still takes one; NaN takes all.
			if !math.IsNaN(limit) && float64(len(emails)) >= limit {
				break
			}
		}
		if emit == "drafts" {
			return StageOutput{Items: []any{}}, nil
		}
		return StageOutput{Items: []any{triageReport(emails)}}, nil
	},
}

// emailField is String(raw?.k1 ?? raw?.k2 ?? …).trim(), "" when every
// key is null or missing.
func emailField(raw any, keys ...string) string {
	for _, k := range keys {
		if v := member(raw, k); v != nil && v != undefined {
			return strings.TrimSpace(jsString(v))
		}
	}
	return ""
}

// normalizeEmail is Lobster's normalised message: id, threadId (the id
// when absent), from, subject, date, snippet and labels, in that order.
func normalizeEmail(raw any) *Object {
	id := emailField(raw, "id", "messageId")
	thread := emailField(raw, "threadId", "thread_id")
	if thread == "" {
		thread = id
	}
	labels := []any{}
	if l, ok := member(raw, "labels").([]any); ok {
		for _, x := range l {
			labels = append(labels, jsString(x))
		}
	}
	o := NewObject(7)
	o.Set("id", id)
	o.Set("threadId", thread)
	o.Set("from", emailField(raw, "from", "sender"))
	o.Set("subject", emailField(raw, "subject"))
	o.Set("date", emailField(raw, "date", "internalDate", "timestamp"))
	o.Set("snippet", emailField(raw, "snippet", "bodyPreview"))
	o.Set("labels", labels)
	return o
}

// triageReport buckets the messages: a subject with "action required"
// or "urgent" needs action; an UNREAD message from a sender that is no
// no-reply address needs a reply; the rest is FYI.
func triageReport(emails []*Object) *Object {
	reply, action, fyi := []any{}, []any{}, []any{}
	all := make([]any, len(emails))
	for i, e := range emails {
		all[i] = e
		id, _ := e.Get("id")
		subject, _ := e.Get("subject")
		from, _ := e.Get("from")
		labels, _ := e.Get("labels")
		unread := false
		for _, l := range labels.([]any) {
			unread = unread || strings.ToUpper(l.(string)) == "UNREAD"
		}
		s := strings.ToLower(subject.(string))
		switch {
		case strings.Contains(s, "action required") || strings.Contains(s, "urgent"):
			action = append(action, id)
		case unread && !noReply(from.(string)):
			reply = append(reply, id)
		default:
			fyi = append(fyi, id)
		}
	}
	buckets := NewObject(3)
	buckets.Set("needsReply", reply)
	buckets.Set("needsAction", action)
	buckets.Set("fyi", fyi)
	o := NewObject(4)
	o.Set("summary", jsNumber(float64(len(reply)))+" need replies, "+jsNumber(float64(len(action)))+" need action, "+jsNumber(float64(len(fyi)))+" FYI")
	o.Set("buckets", buckets)
	o.Set("emails", all)
	o.Set("mode", "deterministic")
	return o
}

// noReply reports whether a sender looks automated.
func noReply(from string) bool {
	f := strings.ToLower(from)
	for _, s := range []string{"no-reply", "noreply", "do-not-reply", "donotreply"} {
		if strings.Contains(f, s) {
			return true
		}
	}
	return false
}
