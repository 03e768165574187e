package gateway

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// ConfigFile is the gateway config a home holds by convention,
// $FLOWGATE_HOME/gateway.yaml. A gateway started without --config reads it
// when it exists, and so does a gateway a command hosts in-process (tasks
// run, pipeline run and the others with no gateway running), so that the
// failure patterns, the diagnoser and the probe apply with or without a
// daemon.
const ConfigFile = "gateway.yaml"

// HomeConfig reads the gateway config of home: the file at path when it is
// given, else home's ConfigFile when it exists, else none (the zero
// FileConfig, every default). A file that cannot be read or is invalid is
// an error that names it.
func HomeConfig(home, path string) (FileConfig, error) {
	if path == "" {
		path = filepath.Join(home, ConfigFile)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return FileConfig{}, nil
		}
	}
	return LoadConfig(path)
}

// InProcess is the config a gateway hosted in-process by a command
// applies: c without its http listener, which is the daemon's alone (a
// command's gateway lives only as long as the command), but with its
// public_url, so its messages still link to the daemon's run center.
func (c FileConfig) InProcess() FileConfig {
	c.HTTP = HTTPConfig{PublicURL: c.HTTP.PublicURL}
	return c
}
