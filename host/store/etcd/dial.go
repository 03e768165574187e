package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Scheme starts every etcd store URL.
const Scheme = "etcd://"

// DefaultPort is the client port an endpoint without one gets.
const DefaultPort = "2379"

// PasswordEnv holds the password for a Config.User given without one.
const PasswordEnv = "FLOWGATE_ETCD_PASSWORD"

// Config says how to reach an etcd cluster and which prefix to use: what
// a store URL and the flags named as etcdctl names them (--cacert,
// --cert, --key, --user) give. Endpoints and Options.Prefix are required.
type Config struct {
	// Endpoints are the cluster's client addresses, host:port.
	Endpoints []string
	// CACert, Cert and Key are PEM files: the CA that signed the cluster's
	// certificates, and this client's certificate and key. Any of them
	// turns TLS on. Empty means plain connections.
	CACert, Cert, Key string
	// User authenticates as "name" or "name:password"; a name alone takes
	// its password from $FLOWGATE_ETCD_PASSWORD. Empty means no auth.
	User string
	// DialTimeout bounds Open's first contact with the cluster. Zero
	// means 5s.
	DialTimeout time.Duration
	// Options configures the store; Prefix comes from the URL.
	Options Options
}

// ParseURL reads a store URL, etcd://host1:2379,host2:2379/prefix, into
// a Config with its endpoints and prefix. A host without a port gets
// DefaultPort. The error for a malformed URL says what a good one looks
// like.
func ParseURL(s string) (Config, error) {
	const example = "etcd://host1:2379,host2:2379/flowgate"
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return Config{}, fmt.Errorf("store URL %q does not start with %s; write it as %s", s, Scheme, example)
	}
	hosts, path, _ := strings.Cut(rest, "/")
	if strings.ContainsAny(rest, "?#@") {
		return Config{}, fmt.Errorf("store URL %q: an etcd store URL holds hosts and a prefix only (%s); give TLS files with --cacert, --cert and --key and a user with --user", s, example)
	}
	var cfg Config
	for h := range strings.SplitSeq(hosts, ",") {
		if h == "" {
			return Config{}, fmt.Errorf("store URL %q names an empty host; write it as %s", s, example)
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			bare := strings.Trim(h, "[]")
			if strings.Contains(bare, ":") && net.ParseIP(bare) == nil {
				return Config{}, fmt.Errorf("store URL %q: host %q is not host:port; write it as %s", s, h, example)
			}
			h = net.JoinHostPort(bare, DefaultPort)
		}
		if _, port, _ := net.SplitHostPort(h); strings.Trim(port, "0123456789") != "" || port == "" {
			return Config{}, fmt.Errorf("store URL %q: host %q has no numeric port; write it as %s", s, h, example)
		}
		cfg.Endpoints = append(cfg.Endpoints, h)
	}
	path = strings.Trim(path, "/")
	if path == "" {
		return Config{}, fmt.Errorf("store URL %q names no key prefix: every installation needs its own, as in %s", s, example)
	}
	cfg.Options.Prefix = "/" + path + "/"
	return cfg, nil
}

// URL returns the store URL of cfg, as ParseURL reads it.
func (c Config) URL() string {
	return Scheme + strings.Join(c.Endpoints, ",") + strings.TrimSuffix(c.Options.Prefix, "/")
}

// Open dials the cluster, checks that it answers within DialTimeout, and
// returns a Store that closes its client on Close. It fails with an error
// naming the endpoints and what to check when the cluster cannot be
// reached or refuses the credentials.
func Open(cfg Config) (*Store, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcd store: Config.Endpoints is empty: name at least one host:port")
	}
	if err := cfg.Options.Validate(); err != nil {
		return nil, err
	}
	cc := clientv3.Config{Endpoints: cfg.Endpoints, DialTimeout: cfg.DialTimeout, Logger: zap.NewNop()}
	if cc.DialTimeout == 0 {
		cc.DialTimeout = 5 * time.Second
	}
	var err error
	if cc.TLS, err = cfg.tls(); err != nil {
		return nil, err
	}
	if cfg.User != "" {
		name, pass, ok := strings.Cut(cfg.User, ":")
		if !ok {
			pass = os.Getenv(PasswordEnv)
		}
		cc.Username, cc.Password = name, pass
	}
	cli, err := clientv3.New(cc)
	if err != nil {
		return nil, fmt.Errorf("etcd store: connect to %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cc.DialTimeout)
	defer cancel()
	if _, err := cli.Get(ctx, cfg.Options.Prefix, clientv3.WithCountOnly(), clientv3.WithPrefix()); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd store: no answer from %s (%w): check that etcd runs there, that --cacert/--cert/--key match a TLS cluster, and that --user may read %s",
			strings.Join(cfg.Endpoints, ","), err, cfg.Options.Prefix)
	}
	s, err := New(cli, cfg.Options)
	if err != nil {
		cli.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// tls returns the TLS config the files ask for, or nil for none.
func (c Config) tls() (*tls.Config, error) {
	if c.CACert == "" && c.Cert == "" && c.Key == "" {
		return nil, nil
	}
	if (c.Cert == "") != (c.Key == "") {
		return nil, errors.New("etcd store: --cert and --key go together: give both, or neither")
	}
	info := transport.TLSInfo{CertFile: c.Cert, KeyFile: c.Key, TrustedCAFile: c.CACert}
	t, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd store: TLS files (--cacert %q, --cert %q, --key %q): %w", c.CACert, c.Cert, c.Key, err)
	}
	return t, nil
}
