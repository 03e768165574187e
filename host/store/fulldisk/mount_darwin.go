package fulldisk

import "testing"

// mountTmpfs skips the test: a full disk is made with a Linux tmpfs.
func mountTmpfs(t testing.TB, _ string, _ int64) {
	t.Helper()
	t.Skip("this test fills a small tmpfs, which needs Linux; run it there")
}

// bindMount skips the test: it needs a Linux bind mount.
func bindMount(t testing.TB, _, _ string) {
	t.Helper()
	t.Skip("this test binds a file onto a small tmpfs, which needs Linux; run it there")
}
