package cli

import "golang.org/x/sys/unix"

// ioctlGetTermios is the ioctl that reads a terminal's settings; isTerminal
// asks it of a file.
const ioctlGetTermios = unix.TIOCGETA
