package shim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is wrapped by OpenTaskFile's refusal of a file that is
// not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// OpenTaskFile opens for reading a file that a task can reach and so
// replace: its progress file, its output files, its attempt record. The
// task may have put a named pipe, a directory or a symbolic link (to
// /dev/zero, say) there; reading one could block for ever or never end.
// So OpenTaskFile follows no symbolic link and never blocks on the open,
// and it refuses anything but a regular file with an error that wraps
// ErrNotRegular and says what the file is. A missing file gives an error
// matching fs.ErrNotExist.
func OpenTaskFile(path string) (*os.File, error) {
	return openTaskFile(path, os.O_RDONLY)
}

// openTaskFile is OpenTaskFile with the open flags flag, to which it
// adds O_NOFOLLOW and O_NONBLOCK (a named pipe with no writer, or for
// writing with no reader, is refused, not waited for). A file it creates
// has mode 0600. Reads and writes of a regular file do not heed
// O_NONBLOCK, and (*os.File).Fd clears it.
func openTaskFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o600)
	if err != nil {
		// Nothing there is nothing to name (the gateway looks for files
		// that are mostly absent, such as giveup.json, at every task).
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(path, fi.Mode())
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(path, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// notRegular is the refusal of the file at path, of mode m.
func notRegular(path string, m fs.FileMode) error {
	return fmt.Errorf("%s is %s, %w: a task must leave it a regular file (append to it, never replace it)", path, fileKind(m), ErrNotRegular)
}

// fileKind names the type of a file of mode m that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
