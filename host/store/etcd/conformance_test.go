package etcd_test

import (
	"os"
	"testing"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
	"github.com/flowgate/flowgate/host/store/storetest"
)

// server is the package's embedded etcd; each test uses a prefix of its
// own.
var server *etcdtest.Server

func TestMain(m *testing.M) {
	os.Exit(etcdtest.Main(m, &server))
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return server.Open(t) })
}

// TestConformanceSmallPages runs the suite with two keys a page, so that
// every scan crosses pages.
func TestConformanceSmallPages(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return server.Open(t, etcd.Options{PageSize: 2}) })
}
