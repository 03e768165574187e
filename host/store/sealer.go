package store

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// sealWaitSize is the file size from which Close waits for the last
// change to settle (at most sealSettle) to write the seal: a walk of a
// file this large costs the next open far more than the wait. A smaller
// file is walked in less time than the wait takes.
const sealWaitSize = 16 << 20

// sealer writes the seal of a writer's store file (see seal.go) once its
// commits settle: a commit arms it, and sealSettle later it seals the file
// as it then is, or arms again while commits go on.
//
// It seals only what this writer wrote over a file it verified: it knows
// the file's stamp after each of its own commits, and a file whose stamp
// moved otherwise (another program wrote it: the lock is only advisory)
// is never sealed again by this writer, and its seal is removed. It
// writes only while the writer holds the file's lock, and only for the
// file the writer has open, which the path must still name.
type sealer struct {
	path   string
	logger hclog.Logger

	mu     sync.Mutex
	f      *os.File // the store file the writer verified and holds; nil: seal nothing
	own    stamp    // the file as this writer's last commit left it, without txid
	armed  bool
	closed bool
	last   stamp // the last seal written

	// spoiled is set once page damage was met or someone else wrote the
	// file: from then on nothing is sealed. Atomic, because damage is
	// met inside a commit, while write holds mu.
	spoiled atomic.Bool
}

// newSealer returns the sealer of the writer's store file at path. It
// seals nothing when the file there is not the one verify read as
// verified (another process wrote or replaced it in between): that file
// was never verified.
func newSealer(path string, verified stamp, logger hclog.Logger) *sealer {
	s := &sealer{path: path, logger: logger}
	if verified == (stamp{}) {
		return s
	}
	f, err := os.Open(path)
	if err != nil {
		return s
	}
	if st, ok := stampFile(f); !ok || st != verified {
		f.Close()
		return s
	}
	s.f, s.own = f, inodePart(verified)
	return s
}

// write runs commit, which writes the file, as this writer's own change.
// A file changed by someone else since this writer's last commit is
// spoiled first. bbolt runs one write transaction at a time, so holding
// mu across one costs no concurrency.
func (s *sealer) write(commit func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil || s.spoiled.Load() {
		return commit()
	}
	if st, ok := statFile(s.f); !ok || st != s.own {
		s.spoilLocked()
		return commit()
	}
	defer func() {
		st, ok := statFile(s.f)
		if !ok {
			s.release()
			return
		}
		s.own = st
		s.armLocked(sealSettle)
	}()
	return commit()
}

// touch arms s: the file is sealed as it is once its last change settles.
func (s *sealer) touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armLocked(sealSettle)
}

// armLocked makes fire run after d, unless it is due already. Called
// with mu held.
func (s *sealer) armLocked(d time.Duration) {
	if s.f != nil && !s.armed && !s.closed {
		s.armed = true
		time.AfterFunc(d, s.fire)
	}
}

// fire seals the file, or arms again when its last change is too recent.
func (s *sealer) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = false
	if s.closed {
		return
	}
	if _, wait := s.seal(); wait > 0 {
		s.armLocked(wait)
	}
}

// seal writes the seal when the file is as this writer's last commit
// left it and that change has settled, and returns the file's stamp,
// with how long until the change settles when it has not. Called with mu
// held.
func (s *sealer) seal() (stamp, time.Duration) {
	if s.f == nil || s.spoiled.Load() {
		return stamp{}, 0
	}
	now := time.Now() // before the stat: the clock the settling is judged by
	st, ok := stampFile(s.f)
	switch {
	case !ok:
		return st, 0
	case inodePart(st) != s.own:
		s.spoilLocked()
		return st, 0
	case st == s.last:
		return st, 0
	}
	if age := now.Sub(time.Unix(0, st.ctime)); age < sealSettle {
		return st, sealSettle - age
	}
	if info, err := os.Stat(s.path); err != nil || !sameInode(info, st) {
		return st, 0 // the path names another file now: seal nothing
	}
	if err := writeSeal(s.path, st); err != nil {
		s.logger.Warn("cannot write the store's seal; the next open reads every page", "path", sealPath(s.path), "error", err)
		return st, 0
	}
	if s.spoiled.Load() { // spoil ran meanwhile, perhaps before the write
		s.remove()
	}
	s.last = st
	return st, 0
}

// close writes the last seal and stops s. It is called before bbolt
// releases the file's lock, once no commit can start. It waits for the
// last change to settle only for a file of sealWaitSize or more.
func (s *sealer) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if st, wait := s.seal(); wait > 0 && st.size >= sealWaitSize {
		time.Sleep(wait)
		s.seal()
	}
	s.release()
}

// spoil removes the seal and seals nothing more: page damage was met, so
// the next open must read every page and refuse the file. It takes no
// lock: damage is met inside a commit, while write holds mu.
func (s *sealer) spoil() {
	s.spoiled.Store(true)
	s.remove()
}

// spoilLocked is spoil that also closes the file, called with mu held.
func (s *sealer) spoilLocked() {
	s.spoil()
	s.release()
}

// remove deletes the seal file.
func (s *sealer) remove() {
	if err := os.Remove(sealPath(s.path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.logger.Warn("cannot remove the store's seal", "path", sealPath(s.path), "error", err)
	}
}

// release closes the file s seals, which ends its sealing. Called with mu
// held.
func (s *sealer) release() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// inodePart is st without its transaction id: what the file's inode says.
func inodePart(st stamp) stamp {
	st.txid = 0
	return st
}

// sameInode reports whether info is the file st stamps.
func sameInode(info os.FileInfo, st stamp) bool {
	dev, ino, _, _, ok := inodeOf(info)
	return ok && dev == st.dev && ino == st.ino
}
