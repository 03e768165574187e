package gateway

import (
	"path/filepath"

	"github.com/flowgate/flowgate/host/home"
)

// The layout of a flowgate home as commands name it (package home owns
// it): commands find the home and name its files through these, so that
// they need not know where the gateway keeps what.
const (
	// HomeEnvVar names the environment variable that overrides the
	// default home (~/.flowgate).
	HomeEnvVar = home.EnvVar
	// StoreFile is the bbolt store's file name inside the home.
	StoreFile = home.DBFile
)

// ResolveHome returns the home directory: flag when set, else
// $FLOWGATE_HOME, else ~/.flowgate (home.Resolve). It fails only when no
// user home directory can be found.
func ResolveHome(flag string) (string, error) { return home.Resolve(flag) }

// StorePath is the path of the bbolt store file of home dir.
func StorePath(dir string) string { return filepath.Join(dir, home.DBFile) }

// SessionDir is the directory of session name in home dir, which holds
// its lineages' notes.
func SessionDir(dir, name string) string { return filepath.Join(dir, home.SessionsDir, name) }
