package gateway

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// StoreConfig is the config file's store section: where the gateway keeps
// its records. Empty means the bbolt file in the home. It is written
// either as a URL alone,
//
//	store: etcd://10.0.0.1:2379,10.0.0.2:2379/flowgate/prod
//
// or as a map with the etcd connection settings, named as etcdctl names
// them:
//
//	store:
//	  url: etcd://10.0.0.1:2379/flowgate/prod
//	  cacert: /etc/flowgate/etcd-ca.pem
//	  cert: /etc/flowgate/etcd-client.pem
//	  key: /etc/flowgate/etcd-client-key.pem
//	  user: flowgate
type StoreConfig struct {
	URL    string `yaml:"url"`
	CACert string `yaml:"cacert"`
	Cert   string `yaml:"cert"`
	Key    string `yaml:"key"`
	User   string `yaml:"user"`
}

// UnmarshalYAML reads the section as a URL alone or as a map, refusing
// a key it does not know (as the rest of the file does).
func (s *StoreConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		s.URL = n.Value
		return nil
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			switch k := n.Content[i].Value; k {
			case "url", "cacert", "cert", "key", "user":
			default:
				return fmt.Errorf("line %d: store.%s is not a store setting; the store section takes url, cacert, cert, key and user (a password goes in $%s)", n.Content[i].Line, k, etcd.PasswordEnv)
			}
		}
	}
	type plain StoreConfig // without this method
	return n.Decode((*plain)(s))
}

// Spec is the store the section names.
func (s StoreConfig) Spec() backend.Spec {
	return backend.Spec{URL: s.URL, CACert: s.CACert, Cert: s.Cert, Key: s.Key, User: s.User}
}

// Validate reports a malformed URL or settings that do not go with it.
func (s StoreConfig) Validate() error {
	if s == (StoreConfig{}) {
		return nil
	}
	if err := s.Spec().Validate(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}
