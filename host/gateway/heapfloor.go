package gateway

import "github.com/flowgate/flowgate/host/gcfloor"

// KeepHeapFloor lets this process's heap grow to gcfloor.Floor before
// Go's collector runs, unless GOGC or GOMEMLIMIT is set (see
// host/gcfloor). The flowgate binary calls it first, for every command:
// a gateway's small heap churns at every task it runs.
func KeepHeapFloor() { gcfloor.Keep(gcfloor.Floor) }
