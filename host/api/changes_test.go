package api_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
)

func TestBroadcastWakesEveryWaiterOnce(t *testing.T) {
	t.Parallel()
	var b api.Broadcast
	b.Notify() // nobody waits: nothing to close
	first, second := b.Changed(), b.Changed()
	require.Equal(t, first, second, "waiters before a Notify share its channel")
	select {
	case <-first:
		t.Fatal("closed before Notify")
	default:
	}
	b.Notify()
	<-first
	<-second
	next := b.Changed()
	require.NotEqual(t, first, next, "a waiter after the Notify waits for the next one")
}
