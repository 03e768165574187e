package engine

import (
	"strings"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// maxBlocked bounds the blocked reason a task reports, which its record
// and its mirrored flow's blocked_summary keep: a reason is a sentence for
// a person, not a log.
const maxBlocked = 1 << 10

// blockedReason is reason as a task's record keeps it: trimmed, cut to
// maxBlocked bytes on a character boundary.
func blockedReason(reason string) string {
	reason = strings.TrimSpace(reason)
	if len(reason) > maxBlocked {
		reason = strings.ToValidUTF8(reason[:maxBlocked], "") + "…"
	}
	return reason
}

// endStatus is the status a task that ends in status takes: a task that
// reported itself blocked and then succeeded (exited 0) ends blocked, so
// that a person is asked to act instead of its work being taken as done.
// A failure after a blocked report stays a failure.
func endStatus(task *stored.Task, status sdk.TaskStatus) sdk.TaskStatus {
	if status == sdk.TaskSucceeded && task.Blocked != "" {
		return sdk.TaskBlocked
	}
	return status
}
