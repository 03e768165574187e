package cli

import "time"

// The pace of a follower that reads its task or flow again on a timer
// (through a gateway's socket, which cannot tell it of a change): soon
// after something changed, since the next change (a pipeline's next step,
// the task's end) tends to follow, then less and less often.
const (
	paceMin = 10 * time.Millisecond
	paceMax = 100 * time.Millisecond
)

// pace is the wait before a follower's next read.
type pace struct{ next time.Duration }

// after returns the wait before the next read, given whether the last
// read saw a change: paceMin after a change, else twice the last wait, up
// to paceMax.
func (p *pace) after(changed bool) time.Duration {
	switch {
	case changed || p.next == 0:
		p.next = paceMin
	default:
		p.next = min(2*p.next, paceMax)
	}
	return p.next
}
