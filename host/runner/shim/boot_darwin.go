package shim

import "golang.org/x/sys/unix"

// readBootID reads the boot session's UUID, which the kernel makes at
// boot.
func readBootID() string {
	id, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil {
		return ""
	}
	return id
}
