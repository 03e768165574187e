package store

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults applied by Options.WithDefaults to zero fields.
const (
	// DefaultLockTimeout is how long Open waits for another process to
	// release the store file.
	DefaultLockTimeout = 5 * time.Second
	// DefaultInitialMmapSize is the address space mapped at open, so that
	// the file rarely needs a remap (a remap waits for every read
	// transaction to finish).
	DefaultInitialMmapSize = 1 << 30
	// DefaultMaxBatch caps how many Update functions share one commit.
	DefaultMaxBatch = 256
)

// Options configures Open. The zero value is ready to use: every zero field
// takes its default (see WithDefaults).
type Options struct {
	// LockTimeout is how long Open waits when another process holds the
	// store file before failing with ErrLocked. Zero means
	// DefaultLockTimeout (5s); Open never waits forever.
	LockTimeout time.Duration
	// InitialMmapSize is the number of bytes of address space mapped at
	// open. It reserves address space only, not memory or disk. Zero means
	// DefaultInitialMmapSize (1 GiB).
	InitialMmapSize int
	// MaxBatch is the largest number of concurrent Update functions
	// committed together in one transaction. Zero means DefaultMaxBatch
	// (256); 1 turns group commit off.
	MaxBatch int
	// Logger receives open, close and failure events. Nil discards them.
	Logger hclog.Logger
	// Owner describes the opening process, such as "flowgate gateway". It
	// is written to the holder file next to the store, so that a second
	// process that finds the store locked can say who holds it. Empty means
	// the program name.
	Owner string
	// OnCommit, if set, is called after every Update with how long the
	// call took, waiting for its commit group included (a failed Update
	// too). It runs on the caller's goroutine and must not block; the
	// gateway records it as a metric. Nil records nothing.
	OnCommit func(took time.Duration)
}

// WithDefaults returns a copy of o with every zero field set to its
// default.
func (o Options) WithDefaults() Options {
	if o.LockTimeout == 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.InitialMmapSize == 0 {
		o.InitialMmapSize = DefaultInitialMmapSize
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Owner == "" {
		o.Owner = filepath.Base(os.Args[0])
	}
	return o
}

// Validate reports the first field of o that is out of range, by name. The
// zero value is valid.
func (o Options) Validate() error {
	switch {
	case o.LockTimeout < 0:
		return errors.New("store: Options.LockTimeout must not be negative")
	case o.InitialMmapSize < 0:
		return errors.New("store: Options.InitialMmapSize must not be negative")
	case o.MaxBatch < 0:
		return errors.New("store: Options.MaxBatch must not be negative")
	}
	return nil
}
