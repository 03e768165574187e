package main_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
)

// etcdHelper is the helperEnv value that makes the test binary an etcd
// server; etcdDirEnv, etcdClientEnv and etcdPeerEnv say where it keeps
// its data and which URLs it serves.
const (
	etcdHelper    = "etcd"
	etcdDirEnv    = "FLOWGATE_E2E_ETCD_DIR"
	etcdClientEnv = "FLOWGATE_E2E_ETCD_CLIENT"
	etcdPeerEnv   = "FLOWGATE_E2E_ETCD_PEER"
)

// serveEtcd runs the etcd server the environment describes until this
// process is killed, and exits 1 if it fails.
func serveEtcd() {
	client, cerr := url.Parse(os.Getenv(etcdClientEnv))
	peer, perr := url.Parse(os.Getenv(etcdPeerEnv))
	err := cerr
	if err == nil {
		err = perr
	}
	if err == nil {
		err = etcdtest.Serve(os.Getenv(etcdDirEnv), *client, *peer)
	}
	fmt.Fprintln(os.Stderr, "etcd helper:", err)
	os.Exit(1)
}

// etcdProcess is an etcd server in a child process, this test binary run
// again as one, so that the test can kill it with SIGKILL, as an etcd
// dies, and start it again on the same data directory and ports.
type etcdProcess struct {
	t            *testing.T
	dir          string
	client, peer url.URL
	cmd          *exec.Cmd
	done         chan struct{}
}

// startEtcdProcess starts an etcd server process on loopback ports, its
// data in a temporary directory, and waits, bounded, until it answers.
// It is killed when the test ends.
func startEtcdProcess(t *testing.T) *etcdProcess {
	t.Helper()
	client, peer, err := etcdtest.FreeURLs()
	require.NoError(t, err)
	p := &etcdProcess{t: t, dir: filepath.Join(t.TempDir(), "etcd"), client: client, peer: peer}
	t.Cleanup(p.reap)
	p.start()
	return p
}

// start starts the server process and waits, bounded, until it answers
// a read.
func (p *etcdProcess) start() {
	p.t.Helper()
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), helperEnv+"="+etcdHelper, etcdDirEnv+"="+p.dir,
		etcdClientEnv+"="+p.client.String(), etcdPeerEnv+"="+p.peer.String())
	p.cmd.Stderr = os.Stderr
	require.NoError(p.t, p.cmd.Start())
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(p.cmd, p.done)
	cli := p.newClient()
	defer cli.Close()
	polltest.Until(p.t, "", func() (bool, string) {
		select {
		case <-p.done:
			p.t.Fatalf("the etcd process exited at start: %v", p.cmd.ProcessState)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := cli.Get(ctx, "health", clientv3.WithCountOnly())
		return err == nil, fmt.Sprintf("etcd on %s does not answer: %v", p.client.Host, err)
	}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
}

// kill kills the server process with SIGKILL and waits until it is gone.
func (p *etcdProcess) kill() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Kill())
	<-p.done
}

// reap kills the server process unless it has exited: a cleanup.
func (p *etcdProcess) reap() {
	if p.cmd == nil {
		return
	}
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// newClient is a client of the server that outlives its restarts.
func (p *etcdProcess) newClient() *clientv3.Client {
	p.t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{p.client.Host}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(p.t, err)
	return cli
}

// installation opens an installation on a fresh prefix of the server,
// read directly with a client of the test's own that reconnects when the
// server comes back.
func (p *etcdProcess) installation() embeddedInstallation {
	p.t.Helper()
	cli := p.newClient()
	p.t.Cleanup(func() { cli.Close() })
	prefix := "/rejoin/"
	es, err := etcd.New(cli, etcd.Options{Prefix: prefix})
	require.NoError(p.t, err)
	p.t.Cleanup(func() { es.Close() })
	eng, err := engine.New(es, engine.Config{})
	require.NoError(p.t, err)
	return embeddedInstallation{prefix: prefix, url: "etcd://" + p.client.Host + prefix, es: es, eng: eng}
}
