package gateway

import (
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store/etcd"
)

// ClusterConfig is the config file's cluster section: how this gateway
// takes part in an installation kept in etcd. Its labels apply on bbolt
// too; its lease does not.
type ClusterConfig struct {
	// Labels are this gateway's labels, shown by flowgate cluster status
	// (such as gpu or zone=eu): a task run with --on LABEL waits for a
	// gateway that carries LABEL.
	Labels []string `yaml:"labels"`
	// LeaseTTL is the gateway's session lease: a gateway that dies leaves
	// the installation within it. Whole seconds, at least 2s; zero means
	// 10s.
	LeaseTTL Duration `yaml:"lease_ttl"`
}

// Validate names the first impossible value of the section.
func (c ClusterConfig) Validate() error {
	ttl := time.Duration(c.LeaseTTL)
	if ttl != 0 && (ttl < 2*time.Second || ttl%time.Second != 0) {
		return fmt.Errorf("cluster.lease_ttl must be whole seconds, at least 2s (got %s); leave it out for the default, 10s", ttl)
	}
	for i, l := range c.Labels {
		if l == "" || strings.ContainsAny(l, " \t\n,") {
			return fmt.Errorf("cluster.labels[%d] is %q; a label is one word without spaces or commas, such as gpu or zone=eu", i, l)
		}
	}
	return nil
}

// ttlSeconds is LeaseTTL in whole seconds; zero means the default.
func (c ClusterConfig) ttlSeconds() int { return int(time.Duration(c.LeaseTTL) / time.Second) }

// sweep is how often the gateway looks for running tasks of gateways
// that left the installation without its watch seeing it: once a lease
// TTL. The watch is what keeps the bound of a TTL and a few seconds; the
// sweep is the backstop of a departure it could not see (a member that
// joined and left while it was cut off), within two TTLs at most.
func (c ClusterConfig) sweep() time.Duration { return c.leaseTTL() }

// leaseTTL is LeaseTTL, or the default when zero.
func (c ClusterConfig) leaseTTL() time.Duration {
	if c.LeaseTTL == 0 {
		return etcd.DefaultMemberTTL * time.Second
	}
	return time.Duration(c.LeaseTTL)
}
