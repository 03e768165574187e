package home

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EnvVar names the environment variable that overrides the default home.
const EnvVar = "FLOWGATE_HOME"

// DBFile is the store's file name inside the home.
const DBFile = "flowgate.db"

// SessionsDir is the directory inside the home that holds one directory
// per named cron session (session:NAME), kept across runs.
const SessionsDir = "sessions"

// LogsDir is the directory inside the home that holds one directory per
// task: its first attempt's files, a subdirectory per later attempt, and
// the task's progress file (see runner.TaskDir and runner.LogDir).
const LogsDir = "logs"

// DataDir is the directory inside the home that controllers keep large
// values of flows' states in (sdk.DataDirEnv): one directory per flow,
// removed with the flow.
const DataDir = "data"

// MembersFile is the file inside the home that lists the member ids its
// gateways took on an etcd installation, one a line, the latest last: a
// task one of them started runs under this home's shims, with its files
// in this home.
const MembersFile = "members"

// StoreFile is the file inside the home that names the store the home's
// gateway serves, when that is not the home's bbolt file (DBFile): the
// gateway writes it as it starts, and commands run on the home open that
// store when no gateway runs.
const StoreFile = "store.yaml"

// Resolve returns the home directory: flag if set, else $FLOWGATE_HOME,
// else ~/.flowgate. The result is absolute.
func Resolve(flag string) (string, error) {
	dir := flag
	if dir == "" {
		dir = os.Getenv(EnvVar)
	}
	if dir == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find home directory: %w; set %s or pass --home", err, EnvVar)
		}
		dir = filepath.Join(h, ".flowgate")
	}
	return filepath.Abs(dir)
}

// Ensure creates dir with mode 0700 if it does not exist. An existing
// directory keeps its mode; a file in its place is an error, and so is a
// home that Check refuses (another user's, or one group or others can
// write to).
func Ensure(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create flowgate home %s: %w", dir, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("flowgate home %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("flowgate home %s is not a directory; pass another --home", dir)
	}
	return Check(dir)
}
