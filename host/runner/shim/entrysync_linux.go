package shim

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// entrySyncedWithFile reports whether syncing f, a file new in its
// directory, also makes its entry there durable (and the directory's own
// entry, and so on up the path while the entries are new), so that the
// claim need not sync the directory as well. The ext4 driver does: with a journal, syncing the file commits
// the transaction that created it and its entry; without one,
// ext4_sync_parent writes the directory of each new entry up the path
// (fs/ext4/fsync.c). Everything else gets POSIX's rule, a sync of the
// directory. An ext2 mounted by the ext2 driver has ext4's magic number
// but not that behaviour, so the driver is asked by name: a file system
// the ext4 driver mounted shows as /sys/fs/ext4/DEVICE. The answer is
// kept per device, so a pooled shim asks once.
// It looks at the open file, so that a claim asks without a path
// lookup.
func entrySyncedWithFile(f *os.File) bool {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return false
	}
	if v, ok := ext4Devices.Load(st.Dev); ok {
		return v.(bool)
	}
	ext4 := mountedByExt4(f, st.Dev)
	ext4Devices.Store(st.Dev, ext4)
	return ext4
}

// ext4Devices holds entrySyncedWithFile's answer per device.
var ext4Devices sync.Map

// mountedByExt4 reports whether the file system of f, on device dev, is
// mounted by the ext4 driver.
func mountedByExt4(f *os.File, dev uint64) bool {
	var fs unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &fs) != nil || fs.Type != unix.EXT4_SUPER_MAGIC {
		return false
	}
	block, err := os.Readlink("/sys/dev/block/" + strconv.FormatUint(uint64(unix.Major(dev)), 10) + ":" + strconv.FormatUint(uint64(unix.Minor(dev)), 10))
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join("/sys/fs/ext4", filepath.Base(block)))
	return err == nil
}
