package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// maxRequestBody is the largest request body the handler reads: 4 MiB.
// A larger body is refused with 413 and code invalid.
const maxRequestBody = 4 << 20

// NewHandler returns the gateway's HTTP/JSON API over c: every Client
// method as one route under /v1. Bodies and answers are JSON objects with
// snake_case fields; records (flows, tasks, flow views, cancel results,
// counts, status) have the same JSON as their Go types.
//
//	route                        method       request                                answer
//	GET  /v1/status              Status       -                                      GatewayStatus
//	GET  /v1/plugins             Plugins      -                                      []apitype.PluginStatus
//	POST /v1/plugins/{name}/reload            -                                      apitype.PluginStatus
//	                             ReloadPlugin
//	GET  /v1/tasks               ListTasks    query: status runtime flow owner       {tasks, next}
//	                                          after limit
//	POST /v1/tasks               RunTask      {flow_id owner_key runtime label spec  {task, created}
//	                                          idempotency_key status held_env}       (201 when created)
//	GET  /v1/tasks/{token}       ResolveTask  token: task id or idempotency key      stored.Task
//	POST /v1/tasks/{id}/cancel   CancelTask   -                                      stored.Task
//	GET  /v1/tasks/{id}/log      TaskLog      query: stream attempt offset           LogChunk (a gateway's
//	                             (TaskLogs)                                          clients only)
//	GET  /v1/flows               ViewFlows    query: status owner controller chain   {flows, next}
//	                                          mode after limit
//	POST /v1/flows               CreateFlow   {sync_mode owner_key controller_id     sdk.Flow (201)
//	                                          goal current_step state
//	                                          notify_policy origin
//	                                          allow_unknown_controller}
//	GET  /v1/flow-counts         CountFlows   -                                      apitype.FlowCounts
//	GET  /v1/flows/{token}       ViewFlow     token: flow id or owner key            apitype.FlowView
//	                             WaitFlow     query: mark wait (ms): answer once     (as soon as the flow's
//	                                          the flow's FlowMark is not mark        mark differs)
//	POST /v1/flows/{id}/update   UpdateFlow   {expected_revision, patch: {status     sdk.Flow
//	                                          state wait current_step
//	                                          blocked_task_id blocked_summary}}
//	POST /v1/flows/{id}/cancel   CancelFlow   {by} (or no body)                      apitype.CancelResult
//	GET  /v1/sessions            Lineages     query: name archived=1                 [sdk.Lineage]
//	POST /v1/sessions/archive    ArchiveLineage {name workspace}                     sdk.Lineage or null
//	POST /v1/flows/{id}/continue ContinueFlow {expected_revision reason review       {flow, created}
//	                                          assignments controller}                (201 when created)
//	POST /v1/flows/{id}/retry    RetryFlow    {expected_revision by}                 apitype.RetryResult
//	GET  /v1/flows/{id}/history  History      query: after limit                     apitype.HistoryPage
//	GET  /v1/flows/{id}/history/stream        query: after (or Last-Event-ID)        text/event-stream: one
//	                             FollowHistory                                       "data:" entry per event,
//	                                                                                 id: seq; "event: end"
//	                                                                                 once the flow has ended
//	GET  /v1/flows/{id}/kept/{sum} KeptValue  -                                      the value (JSON: base64)
//	GET  /v1/gates               OpenGates    query: controller token id             {gates}
//	POST /v1/gates/decide        DecideGate   {flow kind expected_revision           sdk.Flow
//	                                          decision: {approved response by}}
//
// The cron routes manage scheduled jobs; {ref} is a job id or name.
//
//	route                               method         request                         answer
//	GET  /v1/cron/jobs                  ListJobs       query: all (true or false)      {jobs}
//	POST /v1/cron/jobs                  AddJob         {name description cron tz dst   CronJob (201)
//	                                                   every at pipeline args_json
//	                                                   command session overlap
//	                                                   catchup_window webhook
//	                                                   notify_command
//	                                                   failure_alert_after
//	                                                   failure_alert_cooldown
//	                                                   delete_after_run disabled}
//	GET  /v1/cron/jobs/{ref}            GetJob         -                               CronJob
//	POST /v1/cron/jobs/{ref}/edit       EditJob        the fields of add to change     CronJob
//	POST /v1/cron/jobs/{ref}/enable     SetJobEnabled  [{by}]                          CronJob
//	POST /v1/cron/jobs/{ref}/disable    SetJobEnabled  [{by}]                          CronJob
//	POST /v1/cron/jobs/{ref}/remove     RemoveJob      -                               CronJob (as it was)
//	GET  /v1/cron/jobs/{ref}/runs       JobRuns        query: limit                    {runs}
//	POST /v1/cron/jobs/{ref}/run        RunJobNow      {by}                            CronRun
//	POST /v1/cron/jobs/{ref}/backfill   BackfillJob    {from to dry_run overlap by}    {runs}
//	GET  /v1/cron/status                CronStatus     -                               CronStatus
//
// The trigger routes manage webhook triggers (deliveries themselves go to
// POST /hooks/{name} on the gateway's HTTP listener, not to this API).
//
//	route                                  method             request        answer
//	GET  /v1/triggers                      ListTriggers       -              {triggers}
//	POST /v1/triggers                      AddTrigger         TriggerInput   Trigger (201)
//	GET  /v1/triggers/{name}               GetTrigger         -              Trigger
//	POST /v1/triggers/{name}/enable        SetTriggerEnabled  [{by}]         Trigger
//	POST /v1/triggers/{name}/disable       SetTriggerEnabled  [{by}]         Trigger
//	POST /v1/triggers/{name}/remove        RemoveTrigger      -              Trigger (as it was)
//	GET  /v1/triggers/{name}/runs          TriggerRuns        query: limit   {runs}
//
// The storage routes copy and verify the store file (see Storage).
//
//	route            method  request  answer
//	GET  /v1/backup  Backup  -        the store file as application/octet-stream,
//	                                  its size in the Flowgate-Backup-Size trailer
//	                                  (a stream without it broke off)
//	GET  /v1/check   Check   -        CheckReport
//
// The audit route runs `tasks audit` in the gateway, which knows the state
// of its controller plugins.
//
//	route           method  request  answer
//	GET  /v1/audit  Audit   -        AuditReport
//
// The maintenance route runs `tasks maintenance` in the gateway, with its
// configured retention; it writes only when apply is true.
//
//	route                  method    request          answer
//	POST /v1/maintenance   Maintain  {apply}          MaintenanceReport
//
// The probe routes answer for service managers and load balancers.
//
//	route         request  answer
//	GET /healthz  -        200 {"ok": true} while the gateway serves
//	GET /readyz   -        Readiness: 200 when the gateway can do its work,
//	                       503 when it cannot (problem says why: "store not
//	                       writable: disk full", say)
//
// Path segments are percent-escaped; a lone "." or ".." is sent as %2E. The
// flow counts live outside /v1/flows so that no owner key is shadowed.
//
// # Errors
//
// Every failure answers {"error": {"code", "message", "current",
// "expected", "flag", "rule"}}: message is the error's text verbatim,
// current (the flow as it is now) and expected are set for
// revision_conflict only, flag and rule for an invalid cron job input (a
// *apitype.FlagError: the CLI flag at fault and the rule it broke).
// Codes and statuses:
//
//	invalid 400 (413 for a body over 4 MiB), not_found 404,
//	revision_conflict terminal cancel_requested not_managed owner_mismatch
//	illegal_transition 409, no_route 404, method_not_allowed 405 (with an
//	Allow header), internal 500.
//
// Request bodies must hold exactly one JSON object with known fields only;
// a query parameter that a route does not take, a repeated one, a
// non-numeric or negative limit and an unknown status or mode are invalid.
// A panic while serving is logged with its stack and answered as internal;
// the handler never takes the process down.
//
// c must not be nil. A nil logger discards the log; requests are logged at
// debug level, internal errors at error level.
func NewHandler(c Client, logger hclog.Logger) http.Handler {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &server{c: c, log: logger, mux: http.NewServeMux()}
	s.handle("GET /v1/status", s.status)
	s.handle("GET /v1/plugins", s.plugins)
	s.handle("POST /v1/plugins/{name}/reload", s.reloadPlugin)
	s.handle("GET /v1/tasks", s.listTasks)
	s.handle("POST /v1/tasks", s.runTask)
	s.handle("GET /v1/tasks/{$}", s.resolveTask)
	s.handle("GET /v1/tasks/{token}", s.resolveTask)
	s.handle("POST /v1/tasks/{id}/cancel", s.cancelTask)
	s.handle("GET /v1/tasks/{id}/log", s.taskLog)
	s.handle("GET /v1/flows", s.viewFlows)
	s.handle("POST /v1/flows", s.createFlow)
	s.handle("GET /v1/flow-counts", s.countFlows)
	s.handle("GET /v1/flows/{$}", s.viewFlow)
	s.handle("GET /v1/flows/{token}", s.viewFlow)
	s.handle("POST /v1/flows/{id}/update", s.updateFlow)
	s.handle("POST /v1/flows/{id}/cancel", s.cancelFlow)
	s.handle("POST /v1/flows/{id}/continue", s.continueFlow)
	s.handle("POST /v1/flows/{id}/retry", s.retryFlow)
	s.handle("GET /v1/flows/{id}/history", s.history)
	s.mux.HandleFunc("GET /v1/flows/{id}/history/stream", s.historyStream)
	s.handle("GET /v1/flows/{id}/kept/{sum}", s.keptValue)
	s.handle("GET /v1/sessions", s.lineages)
	s.handle("POST /v1/sessions/archive", s.archiveLineage)
	s.handle("GET /v1/gates", s.openGates)
	s.handle("POST /v1/gates/decide", s.decideGate)
	s.handle("GET /v1/cron/jobs", s.listJobs)
	s.handle("POST /v1/cron/jobs", s.addJob)
	s.handle("GET /v1/cron/jobs/{$}", named("ref", s.c.GetJob))
	s.handle("GET /v1/cron/jobs/{ref}", named("ref", s.c.GetJob))
	s.handle("POST /v1/cron/jobs/{ref}/edit", s.editJob)
	s.handle("POST /v1/cron/jobs/{ref}/enable", enabling("ref", s.c.SetJobEnabled, true))
	s.handle("POST /v1/cron/jobs/{ref}/disable", enabling("ref", s.c.SetJobEnabled, false))
	s.handle("POST /v1/cron/jobs/{ref}/remove", named("ref", s.c.RemoveJob))
	s.handle("GET /v1/cron/jobs/{ref}/runs", s.jobRuns)
	s.handle("POST /v1/cron/jobs/{ref}/run", s.runJobNow)
	s.handle("POST /v1/cron/jobs/{ref}/backfill", s.backfillJob)
	s.handle("GET /v1/cron/status", s.cronStatus)
	s.handle("GET /v1/triggers", s.listTriggers)
	s.handle("POST /v1/triggers", s.addTrigger)
	s.handle("GET /v1/triggers/{name}", named("name", s.c.GetTrigger))
	s.handle("POST /v1/triggers/{name}/enable", enabling("name", s.c.SetTriggerEnabled, true))
	s.handle("POST /v1/triggers/{name}/disable", enabling("name", s.c.SetTriggerEnabled, false))
	s.handle("POST /v1/triggers/{name}/remove", named("name", s.c.RemoveTrigger))
	s.handle("GET /v1/triggers/{name}/runs", s.triggerRuns)
	s.mux.HandleFunc("GET /v1/backup", s.backup)
	s.handle("GET /v1/check", s.check)
	s.handle("GET /v1/audit", s.audit)
	s.handle("POST /v1/maintenance", s.maintain)
	s.handle("GET /healthz", s.healthz)
	s.handle("GET /readyz", s.readyz)
	return s
}

// server is the handler NewHandler returns.
type server struct {
	c       Client
	log     hclog.Logger
	mux     *http.ServeMux
	streams StreamStop
}

// endpoint serves one route: it returns the HTTP status and the value to
// answer with, or an error to report.
type endpoint func(w http.ResponseWriter, r *http.Request) (int, any, error)

func (s *server) handle(pattern string, fn endpoint) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		status, v, err := fn(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, status, v)
	})
}

// ServeHTTP routes r, answering unknown routes and methods with JSON
// errors, and turns a panic into an internal error.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic while serving a request", "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if sw.status == 0 {
				s.writeError(sw, r, fmt.Errorf("the gateway failed while serving %s %s; see the gateway log", r.Method, r.URL.Path))
			}
		}
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", time.Since(start))
	}()
	if r.RequestURI == "*" {
		s.writeError(sw, r, fmt.Errorf("%w: request target * names no API route", sdk.ErrInvalid))
		return
	}
	h, pattern := s.mux.Handler(r)
	if pattern == "" && s.unrouted(sw, r, h) {
		return
	}
	s.mux.ServeHTTP(sw, r)
}

// unrouted answers a request that matches no route with a JSON 404 or 405
// and reports true; it leaves anything else (the mux's redirect of an
// unclean path) to the mux. h is the mux's own answer, run against a
// scratch writer to learn which it is.
func (s *server) unrouted(w http.ResponseWriter, r *http.Request, h http.Handler) bool {
	probe := &probeWriter{header: http.Header{}}
	h.ServeHTTP(probe, r)
	switch probe.status {
	case http.StatusNotFound:
		writeJSON(w, http.StatusNotFound, errorBody{Error: &errorJSON{Code: codeNoRoute,
			Message: fmt.Sprintf("the gateway has no route %s %s; if this CLI is newer than the running gateway, restart the gateway", r.Method, r.URL.Path)}})
		return true
	case http.StatusMethodNotAllowed:
		allow := probe.header.Get("Allow")
		w.Header().Set("Allow", allow)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: &errorJSON{Code: codeMethodNotAllowed,
			Message: fmt.Sprintf("%s is not allowed on %s; use %s", r.Method, r.URL.Path, allow)}})
		return true
	}
	return false
}

func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := errorToWire(err)
	switch {
	case status < http.StatusInternalServerError:
	case r.Context().Err() != nil:
		// The caller went away; nothing failed on this side.
		s.log.Debug("request abandoned", "method", r.Method, "path", r.URL.Path, "error", err)
	default:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	writeJSON(w, status, body)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Error: &errorJSON{Code: codeInternal, Message: "encode answer: " + err.Error()}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func (s *server) status(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	st, err := s.c.Status(r.Context())
	return http.StatusOK, st, err
}

func (s *server) plugins(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	ps, err := s.c.Plugins(r.Context())
	if ps == nil {
		ps = []apitype.PluginStatus{}
	}
	return http.StatusOK, ps, err
}

func (s *server) listTasks(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := parseQuery(r, "status", "runtime", "flow", "owner", "after", "limit")
	if err != nil {
		return 0, nil, err
	}
	f := apitype.TaskFilter{Runtime: q.Get("runtime"), FlowID: q.Get("flow"), OwnerKey: q.Get("owner"), After: q.Get("after")}
	if v := q.Get("status"); v != "" {
		if f.Status, err = sdk.ParseTaskStatus(v); err != nil {
			return 0, nil, err
		}
	}
	if f.Limit, err = parseLimit(q.Get("limit")); err != nil {
		return 0, nil, err
	}
	page, err := s.c.ListTasks(r.Context(), f)
	return http.StatusOK, taskPageToWire(page), err
}

func (s *server) runTask(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in runTaskRequest
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	task, created, err := s.c.RunTask(r.Context(), apitype.CreateTaskInput(in))
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, runTaskResponse{Task: task, Created: created}, err
}

func (s *server) resolveTask(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	task, err := s.c.ResolveTask(r.Context(), r.PathValue("token"))
	return http.StatusOK, task, err
}

func (s *server) cancelTask(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	task, err := s.c.CancelTask(r.Context(), r.PathValue("id"))
	return http.StatusOK, task, err
}

func (s *server) viewFlows(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := parseQuery(r, append([]string{"status", "owner", "controller", "chain", "mode", "after", "limit"}, findParams...)...)
	if err != nil {
		return 0, nil, err
	}
	f := apitype.FlowFilter{OwnerKey: q.Get("owner"), ControllerID: q.Get("controller"), ChainID: q.Get("chain"), After: q.Get("after")}
	if err := parseFindQuery(q, &f); err != nil {
		return 0, nil, err
	}
	if v := q.Get("status"); v != "" {
		if f.Status, err = sdk.ParseFlowStatus(v); err != nil {
			return 0, nil, err
		}
	}
	if v := q.Get("mode"); v != "" {
		if f.SyncMode, err = sdk.ParseSyncMode(v); err != nil {
			return 0, nil, err
		}
	}
	if f.Limit, err = parseLimit(q.Get("limit")); err != nil {
		return 0, nil, err
	}
	page, err := s.c.ViewFlows(r.Context(), f)
	return http.StatusOK, flowViewPageToWire(page), err
}

func (s *server) createFlow(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in createFlowRequest
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	f, err := s.c.CreateFlow(r.Context(), apitype.CreateFlowInput(in))
	return http.StatusCreated, f, err
}

func (s *server) countFlows(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	c, err := s.c.CountFlows(r.Context())
	return http.StatusOK, c, err
}

func (s *server) viewFlow(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := parseQuery(r, "mark", "wait")
	if err != nil {
		return 0, nil, err
	}
	if q.Has("wait") {
		v, err := s.waitFlow(r, r.PathValue("token"), q.Get("mark"), q.Get("wait"))
		return http.StatusOK, v, err
	}
	v, err := s.c.ViewFlow(r.Context(), r.PathValue("token"))
	return http.StatusOK, v, err
}

func (s *server) updateFlow(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in updateFlowRequest
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	if in.ExpectedRevision == nil {
		return 0, nil, fmt.Errorf("%w: expected_revision is required: send the revision of the flow you read", sdk.ErrInvalid)
	}
	f, err := s.c.UpdateFlow(r.Context(), r.PathValue("id"), *in.ExpectedRevision, apitype.FlowPatch(in.Patch))
	return http.StatusOK, f, err
}

func (s *server) cancelFlow(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in cancelFlowRequest
	if r.ContentLength == 0 {
		if _, err := parseQuery(r); err != nil {
			return 0, nil, err
		}
	} else if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	res, err := s.c.CancelFlow(r.Context(), r.PathValue("id"), in.By)
	return http.StatusOK, res, err
}
