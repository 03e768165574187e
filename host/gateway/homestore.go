package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store/backend"
)

// recordStore notes in home dir which store its gateway serves
// (home.StoreFile), so that commands run on the home open that store when
// no gateway runs: it may have been named by --store or by a --config
// file that commands do not read. The home's own bbolt file (the zero
// Spec) removes the note. An etcd user's password is never written: it
// comes from $FLOWGATE_ETCD_PASSWORD.
func recordStore(dir string, spec backend.Spec) error {
	path := filepath.Join(dir, home.StoreFile)
	if spec.URL == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("record in the home that its gateway serves the home's bbolt file: %w; check that %s is writable", err, dir)
		}
		return nil
	}
	user, _, _ := strings.Cut(spec.User, ":")
	b, err := yaml.Marshal(StoreConfig{URL: spec.URL, CACert: spec.CACert, Cert: spec.Cert, Key: spec.Key, User: user})
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err = os.WriteFile(tmp, b, 0o600); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("record in the home that its gateway serves %s: %w; check that %s is writable", spec.URL, err, dir)
	}
	return nil
}

// HomeStore is the store of home dir for commands run on it: the one its
// gateway serves, as the gateway recorded it when it started (see
// home.StoreFile), else the one the home's gateway.yaml names. The zero
// Spec means the home's bbolt file. A record or config that cannot be
// read fails, naming the file.
func HomeStore(dir string) (backend.Spec, error) {
	path := filepath.Join(dir, home.StoreFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		var sc StoreConfig
		if err := yaml.Unmarshal(b, &sc); err != nil {
			return backend.Spec{}, fmt.Errorf("%s: %w; it names the store the home's gateway serves: start that gateway again to write it anew", path, err)
		}
		if err := sc.Validate(); err != nil {
			return backend.Spec{}, fmt.Errorf("%s: %w; it names the store the home's gateway serves: start that gateway again to write it anew", path, err)
		}
		return sc.Spec(), nil
	case !errors.Is(err, fs.ErrNotExist):
		return backend.Spec{}, fmt.Errorf("read the store the home's gateway serves: %w", err)
	}
	fc, err := HomeConfig(dir, "")
	if err != nil {
		return backend.Spec{}, err
	}
	return fc.Store.Spec(), nil
}
