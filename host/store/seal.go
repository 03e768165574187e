package store

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"time"
)

// A seal lets an open skip reading every page of a store file that has
// provably not changed since a flowgate writer knew it sound.
//
// Why that is safe: verify reads every page to catch what bbolt would
// trust and follow into a loop, outside its map or into a failed
// assertion. bbolt never makes such pages. A commit writes its pages
// where the last committed meta page does not point, syncs them, and
// only then writes the meta page, which carries its own checksum; a
// writer killed at any moment (kill -9, a crash) leaves the tree of the
// last whole meta page as sound as bbolt wrote it. What damages a
// committed page is something else writing the file: a copy over it,
// another program, a hand, a disk that lies about its syncs. Any write
// to the file, by anyone, gives its inode a new change time (ctime),
// which no program can set back.
//
// So a writer whose open verified the file, and found it unchanged once
// it held the lock, writes a seal beside it once its commits settle (see
// sealer): the file's device and inode, size, modification and change
// times, and the transaction id of its meta page. An open that finds a
// seal matching all of these reads only the meta pages, and checks that
// the file holds every page they count; a write since, a copy or a move
// over the file, an edit with its mtime put back, all leave a stamp that
// does not match, and the walk runs.
//
// What it gives up: a page that the disk itself damages at rest, under
// an unchanged inode, between a close and the next open is found by
// flowgate check, not at that open (the same damage while the gateway
// runs never was).
const sealSuffix = ".seal"

// sealSettle is how old a file's last change must be before a seal may
// describe it. A file system that stamps changes with a coarse clock (one
// tick: 1 to 10 ms) gives a write within the tick of the last change the
// same ctime; once the clock is past that tick, every later write gets a
// later ctime. Twice the longest tick leaves room for the coarse clock's
// lag.
const sealSettle = 20 * time.Millisecond

// sealMagic starts every seal file, so that no other file passes for one.
const sealMagic = 0x316c_6165_7367_66 // "fgseal1", little endian

// stamp is what a seal binds: the file, its size, when its contents and
// its inode last changed, and its meta page's transaction id.
type stamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds since the epoch
	txid         uint64
}

// stampFile returns the stamp of the open store file f; false when the
// system does not say what it needs or f has no valid meta page.
func stampFile(f *os.File) (stamp, bool) {
	st, ok := statFile(f)
	if !ok {
		return stamp{}, false
	}
	meta, err := readMeta(f)
	if err != nil {
		return stamp{}, false
	}
	st.txid = meta.txid
	return st, true
}

// statFile is stampFile without the transaction id: one fstat, for the
// check around every commit.
func statFile(f *os.File) (stamp, bool) {
	info, err := f.Stat()
	if err != nil {
		return stamp{}, false
	}
	dev, ino, mtime, ctime, ok := inodeOf(info)
	if !ok {
		return stamp{}, false
	}
	return stamp{dev: dev, ino: ino, size: info.Size(), mtime: mtime, ctime: ctime}, true
}

// sealPath is where the seal of the store at path lives.
func sealPath(path string) string { return path + sealSuffix }

// sealed reports whether the seal beside the store at path describes st.
// A missing, short or garbled seal (a torn write) describes nothing.
func sealed(path string, st stamp) bool {
	b, err := os.ReadFile(sealPath(path))
	if err != nil || len(b) != 64 {
		return false
	}
	le := binary.LittleEndian
	h := fnv.New64a()
	h.Write(b[:56])
	if le.Uint64(b) != sealMagic || le.Uint64(b[56:]) != h.Sum64() {
		return false
	}
	got := stamp{dev: le.Uint64(b[8:]), ino: le.Uint64(b[16:]), size: int64(le.Uint64(b[24:])),
		mtime: int64(le.Uint64(b[32:])), ctime: int64(le.Uint64(b[40:])), txid: le.Uint64(b[48:])}
	return got == st
}

// writeSeal writes the seal of the store at path. It is not synced: a
// seal lost or torn in a power cut only costs the next open a walk.
func writeSeal(path string, st stamp) error {
	b := make([]byte, 64)
	le := binary.LittleEndian
	for i, v := range []uint64{sealMagic, st.dev, st.ino, uint64(st.size), uint64(st.mtime), uint64(st.ctime), st.txid} {
		le.PutUint64(b[i*8:], v)
	}
	h := fnv.New64a()
	h.Write(b[:56])
	le.PutUint64(b[56:], h.Sum64())
	return os.WriteFile(sealPath(path), b, 0o600)
}
