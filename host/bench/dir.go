package bench

import "os"

// mkdir makes dir (and its parents) and returns it; a failure shows at
// the first use of dir, with the path in the error.
func mkdir(dir string) string {
	_ = os.MkdirAll(dir, 0o700)
	return dir
}
