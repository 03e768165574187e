package gateway

import (
	"context"
	"fmt"
	"time"
)

// RejoinTTLs is how many lease TTLs (cluster.lease_ttl) a gateway that
// lost its membership of an etcd installation keeps trying to join it
// again before it gives up and stops (Lost).
const RejoinTTLs = 10

// Lost receives, once, why the gateway stopped by itself: it lost its
// membership of the etcd installation and could not join it again
// within RejoinTTLs lease TTLs. The process hosting it should then exit
// non-zero, so that its service manager starts it again.
func (g *Gateway) Lost() <-chan error { return g.lost }

// watchMembership waits for the membership of r to end. Unless the
// gateway ended it (closing r), the lease ended: etcd did not hear from
// the gateway for a lease TTL (it was cut off or paused), so the other
// gateways take over its tasks and event streams, and another leads
// cron. The gateway then joins again (rejoin).
func (g *Gateway) watchMembership(r *records, url string) {
	<-r.member.Done()
	if r.closing.Load() {
		return
	}
	g.log.Error("lost the membership of the etcd installation (its lease ended); the other gateways now take its event streams and its tasks: this gateway stops its work and joins again as a new member once etcd answers",
		"store", url, "member", r.member.ID())
	g.rejoin(r, url)
}

// rejoin stops the gateway's parts, which must do no work as a member
// that is no longer one, and starts the gateway again, every third of a
// lease TTL until etcd answers: a new lease and member id, its running
// tasks reattached (adopted from the old id, unless another gateway
// settled them meanwhile), a new campaign for cron. Only then does it
// close old, whose lease (when etcd still had it, as after a restart of
// etcd) no longer holds any task, so its end frees its cron election
// and its streams at once. A rejoin that fails for RejoinTTLs lease TTLs
// leaves the gateway stopped and says why on Lost; Stop ends a rejoin
// under way.
func (g *Gateway) rejoin(old *records, url string) {
	g.stopping.Lock()
	quit := g.quit
	g.stopping.Unlock()
	g.mu.Lock()
	if g.st != old || quit.Err() != nil {
		g.mu.Unlock()
		return
	}
	ttl := g.cfg.File.Cluster.leaseTTL()
	// A part may be waiting on etcd that does not answer: it is given a
	// lease TTL, not more, so that the gateway joins again in time. One
	// still waiting then does nothing as a member: the lease that ended
	// fences its cron claims, its deliveries and its task starts. The
	// records are taken from the store part first, so that stopping the
	// parts leaves them open.
	g.store.release()
	sctx, cancel := context.WithTimeout(quit, ttl)
	if err := g.stop(sctx); err != nil {
		g.log.Warn("stopping the gateway's parts after it lost its membership", "error", err)
	}
	cancel()
	g.mu.Unlock()
	leave := func() {
		if err := old.close(context.WithoutCancel(quit)); err != nil {
			g.log.Warn("leaving the installation under the old membership", "error", err)
		}
	}
	giveUp := time.Now().Add(RejoinTTLs * ttl)
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		g.mu.Lock()
		if quit.Err() != nil {
			g.mu.Unlock()
			leave()
			return
		}
		err := g.start(quit)
		g.mu.Unlock()
		if err == nil {
			leave()
			g.log.Info("joined the etcd installation again", "store", url)
			return
		}
		if time.Now().After(giveUp) {
			leave()
			g.log.Error("could not join the etcd installation again; stopping", "store", url, "for", RejoinTTLs*ttl, "error", err)
			lost := fmt.Errorf("gateway: lost the membership of the etcd installation %s and could not join it again within %s (%d lease TTLs): %w", url, RejoinTTLs*ttl, RejoinTTLs, err)
			select {
			case g.lost <- lost:
			default: // an earlier loss nobody heard of: this one is the same news
			}
			return
		}
		g.log.Warn("could not join the etcd installation again yet; trying again", "store", url, "error", err)
		select {
		case <-quit.Done():
			leave()
			return
		case <-tick.C:
		}
	}
}
