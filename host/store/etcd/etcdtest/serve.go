package etcdtest

import (
	"fmt"
	"net/url"

	"go.etcd.io/etcd/server/v3/embed"
)

// Serve runs a single-node etcd with its data in dir, serving clients on
// client and its peer port on peer, until the server fails; it returns
// that failure. It is for a test's child process (a test binary run
// again as a server, go-plugin's helper-process pattern): the test can
// SIGKILL that process, as an etcd dies, and start it again on the same
// dir and URLs, where it comes back with every key and lease it had
// written. A server that cannot start returns its error at once.
func Serve(dir string, client, peer url.URL) error {
	e, err := embed.StartEtcd(config(dir, client, peer))
	if err != nil {
		return fmt.Errorf("start etcd on %s: %w", client.Host, err)
	}
	defer e.Close()
	return <-e.Err()
}
