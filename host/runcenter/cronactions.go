package runcenter

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// cronActionRoutes serves the cron jobs' and triggers' actions, each as a
// confirmation page (GET) and the form it posts (POST).
func (s *Server) cronActionRoutes() {
	for _, act := range []string{"run", "enable", "disable", "backfill"} {
		s.mux.HandleFunc("GET /cron/{ref}/"+act, s.confirmJob(act))
		s.mux.HandleFunc("POST /cron/{ref}/"+act, s.jobAction(act))
	}
	for _, act := range []string{"enable", "disable"} {
		s.mux.HandleFunc("GET /triggers/{name}/"+act, s.confirmTrigger(act))
		s.mux.HandleFunc("POST /triggers/{name}/"+act, s.triggerAction(act))
	}
}

// jobPath is the path of job id's page.
func jobPath(id string) string { return "/cron/" + url.PathEscape(id) }

// jobZone is where a job's times are read: its --tz, else UTC.
func jobZone(j apitype.CronJob) (*time.Location, string) {
	name := cmp.Or(j.Schedule.TZ, "UTC")
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.UTC, "UTC"
	}
	return loc, name
}

// localLayout is how a datetime-local field writes a time.
const localLayout = "2006-01-02T15:04"

// jobConfirm is the question before action act on job j, at now.
func jobConfirm(j apitype.CronJob, act string, now time.Time) confirmPage {
	p := confirmPage{Post: jobPath(j.ID) + "/" + act, Back: jobPath(j.ID)}
	switch act {
	case "run":
		p.Heading, p.Button = "Run cron job "+j.Name+" now?", "Run now"
		p.What = "A run starts at once, outside the schedule, under the job's overlap policy; the schedule does not move."
	case "enable":
		p.Heading, p.Button = "Enable cron job "+j.Name+"?", "Enable"
		p.What = "The job fires again at its next scheduled time."
	case "disable":
		p.Heading, p.Button, p.Danger = "Disable cron job "+j.Name+"?", "Disable", true
		p.What = "The job stops firing until it is enabled again; a run already going goes on."
	case "backfill":
		loc, zone := jobZone(j)
		to := now.In(loc).Truncate(time.Minute)
		p.Heading, p.Button, p.Range, p.Zone = "Backfill cron job "+j.Name+"?", "Backfill", true, zone
		p.From, p.To = to.Add(-24*time.Hour).Format(localLayout), to.Format(localLayout)
		p.What = "Every time the schedule names after From and up to To runs now, oldest first, under the job's overlap policy; a time that already ran is left alone."
	}
	return p
}

// confirmJob answers the confirmation page of action act on a job.
func (s *Server) confirmJob(act string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		j, err := s.cfg.Client.GetJob(r.Context(), r.PathValue("ref"))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		s.showConfirm(w, r, http.StatusOK, jobConfirm(j, act, time.Now()))
	}
}

// jobAction does action act on a job with the call `flowgate cron
// run|enable|disable|backfill` makes, then shows the job's page. Runs,
// and the job's record of who last enabled or disabled it, name the
// caller's token as who asked.
func (s *Server) jobAction(act string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, by := r.Context(), callerOf(r).name
		j, err := s.cfg.Client.GetJob(ctx, r.PathValue("ref"))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		p := jobConfirm(j, act, time.Now())
		switch act {
		case "run":
			_, err = s.cfg.Client.RunJobNow(ctx, j.ID, by)
		case "enable", "disable":
			_, err = s.cfg.Client.SetJobEnabled(ctx, j.ID, act == "enable", by)
		case "backfill":
			p.From, p.To = r.PostFormValue("from"), r.PostFormValue("to")
			var o apitype.BackfillOptions
			if o, err = backfillRange(j, p.From, p.To, time.Now()); err == nil {
				o.By = by
				_, err = s.cfg.Client.BackfillJob(ctx, j.ID, o)
			}
		}
		if err != nil {
			s.refused(w, r, p, err)
			return
		}
		http.Redirect(w, r, jobPath(j.ID), http.StatusSeeOther)
	}
}

// backfillRange reads a backfill's From and To fields in job j's zone,
// refusing, in the words of the form, an empty or unreadable field, a To
// not after From, and a To in the future.
func backfillRange(j apitype.CronJob, from, to string, now time.Time) (apitype.BackfillOptions, error) {
	loc, zone := jobZone(j)
	var o apitype.BackfillOptions
	for _, f := range []struct {
		name, text string
		at         *time.Time
	}{{"From", from, &o.From}, {"To", to, &o.To}} {
		text := strings.TrimSpace(f.text)
		if text == "" {
			return o, fmt.Errorf("%w: %s is empty; give a date and time, like 2026-03-01T00:00, in %s", sdk.ErrInvalid, f.name, zone)
		}
		t, err := time.ParseInLocation(localLayout, text, loc)
		if err != nil {
			if t, err = time.ParseInLocation(localLayout+":05", text, loc); err != nil {
				return o, fmt.Errorf("%w: %s %q is no date and time; write it like 2026-03-01T00:00, in %s", sdk.ErrInvalid, f.name, text, zone)
			}
		}
		*f.at = t
	}
	switch {
	case !o.To.After(o.From):
		return o, fmt.Errorf("%w: To (%s) is not after From (%s); a backfill runs the times between them", sdk.ErrInvalid, to, from)
	case o.To.After(now):
		return o, fmt.Errorf("%w: To (%s %s) is in the future; a backfill runs past times only, the schedule runs the rest", sdk.ErrInvalid, to, zone)
	}
	return o, nil
}

// triggerConfirm is the question before enabling or disabling trigger
// name.
func triggerConfirm(name, act string) confirmPage {
	p := confirmPage{Post: "/triggers/" + url.PathEscape(name) + "/" + act, Back: "/triggers"}
	if act == "enable" {
		p.Heading, p.Button = "Enable trigger "+name+"?", "Enable"
		p.What = "Deliveries to POST /hooks/" + name + " start work again."
		return p
	}
	p.Heading, p.Button, p.Danger = "Disable trigger "+name+"?", "Disable", true
	p.What = "Deliveries to POST /hooks/" + name + " are refused until it is enabled again; flows it started go on."
	return p
}

// confirmTrigger answers the confirmation page of enabling or disabling
// a trigger.
func (s *Server) confirmTrigger(act string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := s.cfg.Client.GetTrigger(r.Context(), r.PathValue("name"))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		s.showConfirm(w, r, http.StatusOK, triggerConfirm(t.Name, act))
	}
}

// triggerAction enables or disables a trigger with the call `flowgate
// triggers enable|disable` makes, the caller's token named as who did
// it, then shows the triggers.
func (s *Server) triggerAction(act string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if _, err := s.cfg.Client.SetTriggerEnabled(r.Context(), name, act == "enable", callerOf(r).name); err != nil {
			s.refused(w, r, triggerConfirm(name, act), err)
			return
		}
		http.Redirect(w, r, "/triggers", http.StatusSeeOther)
	}
}
