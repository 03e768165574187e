package etcd_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	cfg, err := etcd.ParseURL("etcd://host1:2379,host2:3379/flowgate/prod")
	require.NoError(t, err)
	require.Equal(t, []string{"host1:2379", "host2:3379"}, cfg.Endpoints)
	require.Equal(t, "/flowgate/prod/", cfg.Options.Prefix)
	require.Equal(t, "etcd://host1:2379,host2:3379/flowgate/prod", cfg.URL())

	cfg, err = etcd.ParseURL("etcd://[::1],localhost/f/")
	require.NoError(t, err)
	require.Equal(t, []string{"[::1]:2379", "localhost:2379"}, cfg.Endpoints, "a host without a port gets 2379")
	require.Equal(t, "/f/", cfg.Options.Prefix)

	for url, want := range map[string]string{
		"http://h:2379/f":           "does not start with etcd://",
		"etcd://h:2379":             "names no key prefix",
		"etcd://h:2379/":            "names no key prefix",
		"etcd://h:2379,/f":          "names an empty host",
		"etcd:///f":                 "names an empty host",
		"etcd://u:p@h:2379/f":       "--user",
		"etcd://h:2379/f?tls=1":     "--cacert",
		"etcd://h:2379:99/f":        "is not host:port",
		"bolt:///var/flowgate.db":   "does not start with etcd://",
		"etcd://h1:2379,h2:2379#x/": "hosts and a prefix only",
	} {
		_, err := etcd.ParseURL(url)
		require.ErrorContains(t, err, want, url)
		require.ErrorContains(t, err, "etcd://host1:2379,host2:2379/flowgate", "the error shows a good URL: %s", url)
	}
}

func TestOpenDialsAndChecksTheCluster(t *testing.T) {
	t.Parallel()
	cfg, err := etcd.ParseURL("etcd://" + server.Endpoint() + server.Prefix())
	require.NoError(t, err)
	s, err := etcd.Open(cfg)
	require.NoError(t, err)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("k", []byte("v")); return err }))
	require.NoError(t, s.Close())

	cfg.Endpoints, cfg.DialTimeout = []string{"127.0.0.1:1"}, 300*time.Millisecond
	_, err = etcd.Open(cfg)
	require.ErrorContains(t, err, "no answer from 127.0.0.1:1")
	require.ErrorContains(t, err, "check that etcd runs there")

	cfg.Cert = "client.pem"
	_, err = etcd.Open(cfg)
	require.ErrorContains(t, err, "--cert and --key go together")
	cfg.Key, cfg.CACert = "client-key.pem", t.TempDir()+"/missing-ca.pem"
	_, err = etcd.Open(cfg)
	require.ErrorContains(t, err, "TLS files")
}
