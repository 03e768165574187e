package gateway

import (
	"context"
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

// RestartWait is how long a command that runs work waits, in all, for a
// gateway that is being restarted: the old one still holds the store
// while it stops, and the new one holds it before it serves its socket.
// A restart under load can take longer than StartWait; a store held past
// RestartWait with no gateway serving is reported, naming the holder.
const RestartWait = time.Minute

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

// refuseIfRunning fails with an error wrapping ErrAlreadyRunning when a
// gateway serves the home, waiting (as Dial does) for one that is
// starting. It returns nil when none runs and the store is free, and
// Dial's error when it must not go on.
func (g *Gateway) refuseIfRunning(ctx context.Context) error {
	c, err := Dial(g.cfg.Home, StartWait)
	if err != nil {
		if errors.Is(err, api.ErrNoGateway) {
			return nil
		}
		return err
	}
	defer c.Close()
	st, err := c.Status(ctx)
	if err != nil {
		return nil // it stopped meanwhile: the store's lock decides
	}
	return fmt.Errorf("%w for %s (pid %d); stop it first, or talk to it with flowgate commands", ErrAlreadyRunning, g.cfg.Home, st.PID)
}

// openSlice is how long openStore waits for the store's lock at a time
// before it looks for a gateway again.
const openSlice = 250 * time.Millisecond

// openStore opens the store at path, waiting up to the store's lock
// timeout for another process to let go of it. A gateway that started
// meanwhile holds it for good: openStore looks for one between waits and
// reports it with ErrAlreadyRunning rather than as a locked store.
func (g *Gateway) openStore(ctx context.Context, path string, opts store.Options) (*store.Bolt, error) {
	deadline := time.Now().Add(store.DefaultLockTimeout)
	opts.LockTimeout = openSlice
	for {
		st, err := store.Open(path, opts)
		if err == nil || !errors.Is(err, store.ErrLocked) || !time.Now().Before(deadline) {
			return st, err
		}
		if c, derr := api.DialRemote(SocketPath(g.cfg.Home)); derr == nil {
			c.Close()
			if rerr := g.refuseIfRunning(ctx); rerr != nil {
				return nil, rerr
			}
		}
	}
}
