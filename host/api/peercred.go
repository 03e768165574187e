package api

// peerCred is who holds the other end of a unix socket connection, as
// the kernel reports it: peercred_linux.go reads SO_PEERCRED,
// peercred_darwin.go LOCAL_PEERCRED and LOCAL_PEERPID.
type peerCred struct {
	uid int
	pid int
}
