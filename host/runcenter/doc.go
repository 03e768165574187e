// Package runcenter is the gateway's web page: the run center. It shows
// the flows (paged, with the pressure line and filters), each flow's
// tasks with live progress bars, milestones, pipeline steps, history and
// logs, the open gates with forms to answer them, the cron jobs with
// their next runs and history, the audit's findings and the controller
// plugins. It is served by the gateway's TCP listener (`flowgate gateway
// --http`, see docs/runcenter.md).
//
// # The same API as the CLI
//
// Every page reads and every form writes through an api.Client, the
// interface the CLI uses: a gate is answered with DecideGate and a flow
// cancelled with CancelFlow, exactly as `tasks flow approve` and `tasks
// flow cancel` do. The page can do nothing the CLI cannot.
//
// # Security
//
// Guard wraps the listener's whole handler. With tokens configured, every
// request needs one, as a bearer token or as the cookie the login form
// sets (HttpOnly, SameSite=Strict, Secure over TLS); without one an HTML
// page is answered 401 with the login form and anything else 401 with a
// line saying what to send. Who answers a gate or cancels a flow is the
// name of the token the request carries, never a form field; a listener
// without tokens acts as Anonymous. Every request that is not GET or HEAD
// must carry the page's CSRF token (form field csrf or header
// X-CSRF-Token), an HMAC of the request's token under a key made when the
// gateway starts; without it the answer is 403. Pages are html/template
// templates, so every goal, prompt, label and log line is escaped, and a
// strict Content-Security-Policy allows only the page's own script.
//
// # Live updates
//
// A flow's page follows the flow's history stream (GET
// /v1/flows/{id}/history/stream, the API's server-sent events): progress
// moves the bars, and any other entry is added to the history and redraws
// the tasks, steps and gate. Other pages follow /pulse, which renders the
// page again at each write the gateway reports (at most once a
// Config.Settle) and every Config.Pulse without one, and sends it when it
// changed. A reload draws the page from the store, the history included.
package runcenter
