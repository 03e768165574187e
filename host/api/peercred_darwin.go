package api

import "golang.org/x/sys/unix"

// readPeerCred reads the peer of unix socket fd from LOCAL_PEERCRED (its
// user) and LOCAL_PEERPID (its pid).
func readPeerCred(fd int) (peerCred, error) {
	c, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return peerCred{}, err
	}
	pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		return peerCred{}, err
	}
	return peerCred{uid: int(c.Uid), pid: pid}, nil
}
