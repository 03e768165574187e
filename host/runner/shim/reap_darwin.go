package shim

import "errors"

// becomeSubreaper fails on macOS, which has no child subreaper: the
// processes a child leaves behind are re-parented to launchd, which reaps
// them. The shim still kills them with the group and waits, up to
// stragglerWait, until the group is empty.
func becomeSubreaper() error {
	return errors.New("macOS has no child subreaper; orphans of the task go to launchd")
}
