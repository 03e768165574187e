package shim

import (
	"os"
	"strings"
)

// readBootID reads the boot's random id, which the kernel makes at boot.
func readBootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
