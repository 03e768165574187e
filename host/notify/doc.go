// Package notify delivers finish notifications: the notices the engine
// queues (engine.Notice) when a task whose spec asks for them
// (sdk.TaskSpec.OnFinish) is interrupted or ends, and when a flow that
// asks for them (sdk.Flow.OnFinish) ends, or a flow whose controller's
// config asks for them (on_finish, on_finish_webhook) ends. A task's
// notice is the event task.finished with task_id and task
// (FLOWGATE_TASK_ID and FLOWGATE_TASK_STATUS for a command); a flow's is
// flow.finished with flow_id and flow (FLOWGATE_FLOW_ID and
// FLOWGATE_FLOW_STATUS), and a controller's adds controller
// (FLOWGATE_CONTROLLER).
//
// # Delivery
//
// A Notifier sends every due notice to its command or webhook, through
// the scheduler's delivery (scheduler.Send: a command gets the notice as
// JSON on stdin, a webhook gets it POSTed), and then asks the engine to
// remove it. A gateway that dies between the two sends it again after
// its restart, with the same idempotency key ("<task or flow>/<status>",
// "<flow>/<status>/controller" for a controller's, in the
// Idempotency-Key header and FLOWGATE_NOTICE_KEY), so delivery is at
// least once and a receiver dedupes on the key. A failed delivery is
// tried again after a backoff that grows to 5 minutes, for as long as
// the notice is queued.
//
// # Destinations
//
// A notice that names a destination (engine.Notice.Dest: a flow's notify
// policy, a task's milestone, a cron announcement) goes there through
// Config.Book (package notify/dest), as the documented notice JSON
// (dest.Notice) for an http(s) or cmd: destination and as the text of
// its template for a chat or mail one. The view is built when it is
// sent, from the flow and task records (goal, times, exit code, output)
// and, for a failure, the last lines of the task's stderr under
// Config.Home; with Config.PublicURL it links to the run center. It is
// at least once with the same key, as above, but bounded: after
// Config.Attempts failed tries (waits doubling from 5s to
// Config.MaxBackoff) the notice is given up (engine.NoticeGaveUp): gone
// from the outbox, a notify.failed entry in its flow's history, and a
// notify_failed finding in tasks audit. Logs and records name the
// destination redacted (dest.Redact), never a secret.
//
// # Lifecycle
//
// Start runs the delivery loop until Stop; Wake makes it look at once
// (wire it to engine.NoticeQueued changes). DeliverOnce sends what is due
// once, for tests.
package notify
