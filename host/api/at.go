package api

import (
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/backend"
)

// OpenLocalAt opens the store spec names (a command's --store) and
// returns a Local client over it, with home dir for the files beside the
// records. Unlike OpenLocal it settles no task: the tasks of a store named
// this way (an etcd installation, say) belong to the gateways that run
// them, wherever those are, and only they know which are still running.
func OpenLocalAt(spec backend.Spec, dir, owner string) (*Local, error) {
	st, err := backend.Open(spec, store.Options{Owner: owner})
	if err != nil {
		return nil, err
	}
	return localOver(st, dir)
}

// OpenLocalReaderAt is OpenLocalAt for the commands that only read: the
// store is opened for reading (a bolt file read-only) behind a sealed
// store.Overlay, so every call that would change a record fails with an
// error wrapping store.ErrReadOnly, on etcd too.
func OpenLocalReaderAt(spec backend.Spec, dir string) (*Local, error) {
	base, err := backend.OpenReadOnly(spec)
	if err != nil {
		return nil, err
	}
	st := store.NewOverlay(base)
	st.Seal()
	l, err := localOver(st, dir)
	if err != nil {
		return nil, err
	}
	if ro, ok := base.(*store.ReadOnly); ok {
		l.space = ro.Space
	}
	return l, nil
}

// localOver returns a Local client over st, closing st if it cannot.
func localOver(st store.Store, dir string) (*Local, error) {
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		st.Close()
		return nil, err
	}
	return NewLocal(st, eng, dir, nil), nil
}
