package etcd

import "errors"

// ErrHeld says the installation is served by another process: a
// gateway that serves it alone (gateway.Config.Solo) wraps it when
// another member is there.
var ErrHeld = errors.New("etcd store: held by another process")
