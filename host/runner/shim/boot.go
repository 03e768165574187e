package shim

import "sync"

var (
	bootOnce sync.Once
	boot     string
)

// BootID returns the id the kernel gave the machine's current boot, read
// once, or "" when it cannot be read. Ids of two boots differ, which is
// all the runner asks of it: a write left in the page cache outlives the
// crash of any process, and is lost only with the boot (see
// Spec.Boot).
func BootID() string {
	bootOnce.Do(func() { boot = readBootID() })
	return boot
}
