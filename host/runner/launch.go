package runner

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// ShimBinary is the name of the lean shim binary (cli/flowgate-shim) the
// default launcher looks for next to the running executable.
const ShimBinary = "flowgate-shim"

// launchSelf starts the shim for dir: "flowgate-shim <dir>" when that
// binary sits next to the running executable, else the running executable
// itself as "<exe> shim <dir>". The lean binary saves each task the
// initialisation of every package the full binary links (see
// docs/performance.md); the fallback keeps a lone flowgate binary working.
func launchSelf(dir string, env []string) (*os.Process, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the flowgate executable to run the shim: %w", err)
	}
	return LaunchShim(exe, dir, env)
}

// LaunchShim starts the shim for attempt directory dir as a gateway whose
// executable is exe does: ShimBinary next to exe when it is there, else
// "exe shim dir". env is the shim's whole environment, with the spec
// entry (see Config.Launch).
func LaunchShim(exe, dir string, env []string) (*os.Process, error) {
	if lean := filepath.Join(filepath.Dir(exe), ShimBinary); isExecutable(lean) {
		return shim.Launch(lean, []string{dir}, env)
	}
	return shim.Launch(exe, []string{"shim", dir}, env)
}

// isExecutable reports whether path is a regular file with an execute bit.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
