package gateway

import (
	"context"

	"github.com/flowgate/flowgate/host/store"
)

// storePart is the gateway's store as a lifecycle part, the first to
// start and the last to stop: Start opens the records (openRecords: the
// home's bbolt file, compacted first if asked, or an etcd installation
// the gateway joins), Stop closes them, leaving the installation first.
// The gateway starts and stops it with its mu held, which serialises
// both.
type storePart struct {
	g    *Gateway
	opts store.Options
	// rec is the open records; nil while closed, or once released.
	rec *records
}

// Start opens the records; it does nothing when they are open.
func (s *storePart) Start(ctx context.Context) error {
	if s.rec != nil {
		return nil
	}
	rec, err := s.g.openRecords(ctx, s.opts)
	if err != nil {
		return err
	}
	s.rec = rec
	return nil
}

// Stop closes the records, waiting for etcd until ctx ends; it does
// nothing when they are closed or released.
func (s *storePart) Stop(ctx context.Context) error {
	rec := s.rec
	s.rec = nil
	if rec == nil {
		return nil
	}
	return rec.close(ctx)
}

// release hands the open records to the caller, who closes them: Stop
// then leaves them open. A rejoin takes them so, as it must keep the old
// membership until the gateway has joined again (see rejoin).
func (s *storePart) release() *records {
	rec := s.rec
	s.rec = nil
	return rec
}
