// Package etcdtest runs an embedded single-node etcd for tests: one server
// per test package (starting one costs up to a second), each test on a
// prefix of its own.
//
//	var server *etcdtest.Server
//
//	func TestMain(m *testing.M) {
//		os.Exit(etcdtest.Main(m, &server))
//	}
//
//	func TestSomething(t *testing.T) {
//		st := server.Open(t) // an empty store.Store on a fresh prefix
//		...
//	}
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// Server is an embedded etcd on two loopback ports with its data in a
// temporary directory, fsync on (as in production). Start it with Start;
// the zero value is not usable.
type Server struct {
	e        *embed.Etcd
	dir      string
	cli      *clientv3.Client
	endpoint string
	prefixes atomic.Int64
}

// Main starts a Server into *srv, runs the package's tests, stops the
// server and returns the exit code for os.Exit. A server that cannot start
// fails the run with its error.
func Main(m *testing.M, srv **Server) int {
	s, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdtest:", err)
		return 1
	}
	*srv = s
	code := m.Run()
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "etcdtest:", err)
	}
	return code
}

// Start starts a server and waits until it serves. Another process may
// take a free port between choosing it and binding it, so Start tries a
// few times.
func Start() (*Server, error) {
	var err error
	for range 3 {
		var s *Server
		if s, err = start(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func start() (*Server, error) {
	dir, err := os.MkdirTemp("", "flowgate-etcdtest-")
	if err != nil {
		return nil, err
	}
	client, peer, err := FreeURLs()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e, err := embed.StartEtcd(config(dir, client, peer))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		os.RemoveAll(dir)
		return nil, errors.New("embedded etcd did not become ready within 30s")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client.Host}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		e.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	return &Server{e: e, dir: dir, cli: cli, endpoint: client.Host}, nil
}

// config is a single-node server's config: its data in dir, serving
// clients on client and its peer port on peer, logging nothing.
func config(dir string, client, peer url.URL) *embed.Config {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	return cfg
}

// FreeURLs returns two loopback URLs, for a client and a peer port, on
// ports that were free a moment ago.
func FreeURLs() (client, peer url.URL, err error) {
	var urls [2]url.URL
	for i := range urls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return url.URL{}, url.URL{}, err
		}
		urls[i] = url.URL{Scheme: "http", Host: l.Addr().String()}
		defer l.Close()
	}
	return urls[0], urls[1], nil
}

// Endpoint returns the client address, host:port.
func (s *Server) Endpoint() string { return s.endpoint }

// Client returns a client of the server, shared by every caller.
func (s *Server) Client() *clientv3.Client { return s.cli }

// Dir returns the server's data directory.
func (s *Server) Dir() string { return s.dir }

// Prefix returns a key prefix no earlier call returned, such as "/t/7/".
func (s *Server) Prefix() string { return fmt.Sprintf("/t/%d/", s.prefixes.Add(1)) }

// Open returns an empty store on a fresh prefix, with opts (its Prefix is
// replaced), closed when t ends.
func (s *Server) Open(t testing.TB, opts ...etcd.Options) store.Store {
	t.Helper()
	var o etcd.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Prefix = s.Prefix()
	st, err := etcd.New(s.cli, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// EndLease revokes the lease of member id of st, as etcd ends it when
// the member's process dies: its registration and everything bound to
// its lease go at once. It fails the test when id is not a member.
func (s *Server) EndLease(t testing.TB, st *etcd.Store, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec, err := st.Member(ctx, id)
	if err == nil && rec == nil {
		err = fmt.Errorf("%s is not a member", id)
	}
	if err == nil {
		_, err = s.cli.Revoke(ctx, clientv3.LeaseID(rec.Lease))
	}
	if err != nil {
		t.Fatalf("end the lease of member %s: %v", id, err)
	}
}

// Close stops the server and removes its data.
func (s *Server) Close() error {
	err := s.cli.Close()
	s.e.Close()
	if rmErr := os.RemoveAll(s.dir); err == nil {
		err = rmErr
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// Lazy starts a Server on first use, for a package where few tests need
// one; its zero value is ready. Call Close from TestMain after m.Run.
type Lazy struct {
	once sync.Once
	srv  *Server
	err  error
}

// Get returns the server, starting it on the first call; a server that
// cannot start fails t.
func (l *Lazy) Get(t testing.TB) *Server {
	t.Helper()
	l.once.Do(func() { l.srv, l.err = Start() })
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.srv
}

// Close stops the server if one was started.
func (l *Lazy) Close() {
	if l.srv != nil {
		l.srv.Close()
	}
}
