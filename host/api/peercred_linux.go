package api

import "syscall"

// readPeerCred reads the peer of unix socket fd from SO_PEERCRED.
func readPeerCred(fd int) (peerCred, error) {
	c, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return peerCred{}, err
	}
	return peerCred{uid: int(c.Uid), pid: int(c.Pid)}, nil
}
