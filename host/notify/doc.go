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
// # Lifecycle
//
// Start runs the delivery loop until Stop; Wake makes it look at once
// (wire it to engine.NoticeQueued changes). DeliverOnce sends what is due
// once, for tests.
package notify
