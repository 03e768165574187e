package main_test

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// deliveryLine is what a gateway logs (at level debug) for each event it
// delivered to a controller, after the controller acknowledged it.
const deliveryLine = "event delivered: flow="

// deliveries follows the fleet's gateway logs for the events each
// gateway delivered, to tell which gateway parked a flow at its gate:
// the one that delivered the event the controller parked it on. No
// record says so (a flow's stream claim goes with its last event), and
// the logs of a killed gateway outlive it.
type deliveries struct {
	f *fleet
	// read is how far each member's log has been read.
	read map[*fleetMember]int64
	// last is the latest delivery to each flow: when and by whom.
	last map[string]delivery
}

type delivery struct {
	at     time.Time
	member *fleetMember
}

func newDeliveries(f *fleet) *deliveries {
	return &deliveries{f: f, read: map[*fleetMember]int64{}, last: map[string]delivery{}}
}

// parker returns the member that parked flow at the gate it has waited
// at since since: the last to deliver an event to the flow, when that
// delivery was logged at or after since; nil while it is not logged yet.
func (d *deliveries) parker(flow string, since time.Time) *fleetMember {
	d.f.t.Helper()
	for _, m := range d.f.members {
		d.follow(d.f.t, m)
	}
	l, ok := d.last[flow]
	if !ok || l.at.Before(since.Truncate(time.Millisecond)) {
		return nil
	}
	return l.member
}

// follow reads the whole lines m's log gained since the last call.
func (d *deliveries) follow(t *testing.T, m *fleetMember) {
	t.Helper()
	fh, err := os.Open(m.log)
	require.NoError(t, err)
	defer fh.Close()
	_, err = fh.Seek(d.read[m], io.SeekStart)
	require.NoError(t, err)
	b, err := io.ReadAll(fh)
	require.NoError(t, err)
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	d.read[m] += int64(len(b))
	for _, line := range strings.Split(string(b), "\n") {
		stamp, _, _ := strings.Cut(line, " ")
		_, rest, ok := strings.Cut(line, deliveryLine)
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, stamp)
		require.NoError(t, err, "a log line of gateway %s starts with no time: %q", m.name, line)
		flow, _, _ := strings.Cut(rest, " ")
		if at.After(d.last[flow].at) {
			d.last[flow] = delivery{at: at, member: m}
		}
	}
}
