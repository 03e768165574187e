package gateway

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
)

// StartWait is how long Dial, and Start for a second gateway, wait for a
// gateway that holds the store but does not serve its socket yet: a
// gateway opens the store, reattaches to its tasks and starts its plugins
// before it listens.
const StartWait = 15 * time.Second

// ErrAlreadyRunning is returned by Start when a gateway already serves the
// home.
var ErrAlreadyRunning = errors.New("a gateway already runs")

// dialPoll is how often Dial looks again while it waits.
const dialPoll = 25 * time.Millisecond

// Dial connects to the gateway of home dir. When none answers but another
// process holds the store, which is what a starting gateway does before it
// listens, Dial keeps trying for up to wait and connects as soon as that
// gateway answers. It fails with an error wrapping api.ErrNoGateway when
// no gateway answers and the store is free, so the caller may open it
// itself; with the store's error wrapping store.ErrLocked, naming the
// holder, when the store is still held after wait with no gateway
// answering; and with DialRemote's error for a gateway it must not talk
// to or that does not answer.
func Dial(dir string, wait time.Duration) (*api.Remote, error) {
	sock, db := SocketPath(dir), filepath.Join(dir, home.DBFile)
	deadline := time.Now().Add(wait)
	for {
		c, err := api.DialRemote(sock)
		if err == nil || !errors.Is(err, api.ErrNoGateway) {
			return c, err
		}
		held := store.Held(db)
		if held == nil {
			return nil, err
		}
		if !errors.Is(held, store.ErrLocked) {
			return nil, held
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("no gateway answers on %s and %w", sock, held)
		}
		time.Sleep(dialPoll) // a bounded poll for the socket to answer
	}
}
