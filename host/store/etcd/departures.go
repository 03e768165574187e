package etcd

import (
	"context"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Departures sends the id of each member that leaves the installation
// from now on: its lease ended (it died, or was cut off from etcd past
// its TTL) or it left. A watch that breaks (etcd unreachable, its
// history compacted) is set up again after a second, so a departure in
// between can be missed: callers sweep now and then as well. The channel
// is closed when ctx ends.
func (s *Store) Departures(ctx context.Context) <-chan string {
	out := make(chan string, 16)
	go func() {
		defer close(out)
		for ctx.Err() == nil {
			watch := s.cli.Watch(clientv3.WithRequireLeader(ctx), s.membersKey(), clientv3.WithPrefix(), clientv3.WithFilterPut())
			for resp := range watch {
				for _, ev := range resp.Events {
					select {
					case out <- strings.TrimPrefix(string(ev.Kv.Key), s.membersKey()):
					case <-ctx.Done():
						return
					}
				}
			}
			sleepCtx(ctx, time.Second)
		}
	}()
	return out
}
