// Package backend opens a store from its URL: bolt://PATH for the embedded
// bbolt file, etcd://host1:2379,host2:2379/prefix for an etcd cluster. The
// gateway's --store, the commands that open a store directly and
// `flowgate store migrate` all go through Open, so they accept the same
// URLs and refuse bad ones with the same messages.
package backend

import (
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// BoltScheme starts the URL of a bbolt store file.
const BoltScheme = "bolt://"

// Spec names a store: its URL, and for etcd the TLS and auth settings
// named as etcdctl names them. The zero value names no store.
type Spec struct {
	// URL is bolt://PATH or etcd://host:port[,host:port…]/prefix.
	URL string
	// CACert, Cert, Key and User are etcdctl's --cacert, --cert, --key
	// and --user (see etcd.Config); a bolt URL refuses them.
	CACert, Cert, Key, User string
}

// IsEtcd reports whether s names an etcd store.
func (s Spec) IsEtcd() bool { return strings.HasPrefix(s.URL, etcd.Scheme) }

// Validate reports what is wrong with s without contacting anything.
func (s Spec) Validate() error {
	_, _, err := s.parse()
	return err
}

// parse returns the bolt path or the etcd config s names (the other is
// empty).
func (s Spec) parse() (string, etcd.Config, error) {
	switch {
	case s.IsEtcd():
		cfg, err := etcd.ParseURL(s.URL)
		if err != nil {
			return "", etcd.Config{}, err
		}
		cfg.CACert, cfg.Cert, cfg.Key, cfg.User = s.CACert, s.Cert, s.Key, s.User
		return "", cfg, nil
	case strings.HasPrefix(s.URL, BoltScheme):
		path := strings.TrimPrefix(s.URL, BoltScheme)
		if path == "" {
			return "", etcd.Config{}, fmt.Errorf("store URL %q names no file: write bolt:///path/to/flowgate.db", s.URL)
		}
		if s.CACert != "" || s.Cert != "" || s.Key != "" || s.User != "" {
			return "", etcd.Config{}, fmt.Errorf("store URL %q is a bbolt file: --cacert, --cert, --key and --user are for an etcd:// store", s.URL)
		}
		return path, etcd.Config{}, nil
	}
	return "", etcd.Config{}, fmt.Errorf("store URL %q: write bolt:///path/to/flowgate.db for a bbolt file or etcd://host1:2379,host2:2379/prefix for etcd", s.URL)
}

// Open opens the store s names. A bolt store takes opts (its owner, its
// logger); an etcd store takes its logger and OnCommit from them. It
// fails with the backend's error, which says what to check.
func Open(s Spec, opts store.Options) (store.Store, error) {
	path, cfg, err := s.parse()
	if err != nil {
		return nil, err
	}
	if path != "" {
		return store.Open(path, opts)
	}
	cfg.Options.Logger, cfg.Options.OnCommit = opts.Logger, opts.OnCommit
	return etcd.Open(cfg)
}

// OpenReadOnly opens the store s names for reading only: a bolt file with
// store.OpenReadOnly (a missing file fails), an etcd prefix as Open does
// (etcd has no read-only mode; the caller only reads).
func OpenReadOnly(s Spec) (store.Store, error) {
	path, cfg, err := s.parse()
	if err != nil {
		return nil, err
	}
	if path != "" {
		return store.OpenReadOnly(path, store.Options{})
	}
	return etcd.Open(cfg)
}
