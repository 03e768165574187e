package throttle_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/throttle"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// A message repeated 1000 times within one interval is logged once; the
// first repeat after the interval is logged with how many were held back.
// Other messages and levels are counted apart.
func TestLogKeepsARepeatedMessageToOneLinePerInterval(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := &clock{t: time.Unix(1000, 0)}
	l := &throttle.Log{Logger: hclog.New(&hclog.LoggerOptions{Output: &buf}), Every: 10 * time.Second, Now: c.now}
	for i := range 1000 {
		l.Error("record failed delivery", "seq", i)
		c.t = c.t.Add(time.Millisecond)
	}
	l.Warn("record failed delivery", "seq", 0)
	l.Error("list runnable tasks", "error", "disk full")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3, buf.String())
	require.Contains(t, lines[0], "[ERROR] record failed delivery: seq=0")

	c.t = c.t.Add(10 * time.Second)
	l.Error("record failed delivery", "seq", 1000)
	lines = strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 4)
	require.Contains(t, lines[3], "record failed delivery (repeated 999 times in the last 11s): seq=1000")

	c.t = c.t.Add(time.Minute)
	l.Error("record failed delivery", "seq", 1001)
	require.Contains(t, buf.String(), "[ERROR] record failed delivery: seq=1001", "a quiet interval starts afresh")
}

// The hold doubles from Base up to Max, Wait counts it down, and a success
// clears it.
func TestBackoffDoublesUpToMaxAndClearsOnSuccess(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1000, 0)}
	b := &throttle.Backoff{Base: time.Second, Max: 5 * time.Second, Now: c.now}
	require.Zero(t, b.Wait())
	var holds []time.Duration
	for range 5 {
		holds = append(holds, b.Fail())
		c.t = c.t.Add(holds[len(holds)-1])
	}
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, holds)
	require.Equal(t, 5, b.Failures())
	b.Fail()
	require.Equal(t, 5*time.Second, b.Fail(), "failures during a hold do not lengthen it")
	require.Equal(t, 6, b.Failures())
	c.t = c.t.Add(2 * time.Second)
	require.Equal(t, 3*time.Second, b.Wait())
	c.t = c.t.Add(time.Hour)
	require.Zero(t, b.Wait())
	b.Succeed()
	require.Zero(t, b.Failures())
	require.Equal(t, time.Second, b.Fail())

	zero := throttle.Backoff{Now: c.now}
	require.Equal(t, throttle.DefaultBase, zero.Fail())
	for range 100 {
		c.t = c.t.Add(time.Hour)
		zero.Fail()
	}
	c.t = c.t.Add(time.Hour)
	require.Equal(t, throttle.DefaultMax, zero.Fail())
}
