package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"go.etcd.io/bbolt"
)

// bbolt's on-disk format, as far as pageWalk reads it (go.etcd.io/bbolt
// internal/common: page.go, meta.go, bucket.go).
const (
	pageHeaderSize  = 16 // id u64, flags u16, count u16, overflow u32
	elementSize     = 16 // a branch or leaf element
	metaSize        = 64 // magic … checksum, after the page header
	branchPageFlag  = 0x01
	leafPageFlag    = 0x02
	freelistFlag    = 0x10
	bucketLeafFlag  = 0x01
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	noFreelist      = ^uint64(0)
	inBucketSize    = 16 // root pgid u64, sequence u64
	maxTreeDepth    = 64 // far deeper than any real tree: a deeper one loops
	firstDataPageID = 2  // pages 0 and 1 are the meta pages
)

// boltMeta is the part of a bbolt meta page pageWalk needs.
type boltMeta struct {
	pageSize uint32
	root     uint64 // the root bucket's page
	freelist uint64
	hwm      uint64 // pages in use: the high water mark
	txid     uint64
}

// pageWalk reads a store file's pages with plain reads, never through
// bbolt's memory map, and checks everything bbolt follows from the meta
// page: every page a tree names lies inside the file, is named once, has
// the type its parent expects and elements that fit in it; the trees are
// shallow; the free list names pages inside the file. bbolt trusts all of
// this, so a damaged page makes it recurse forever, read past the end of
// its map (a fault that kills the process) or fail an assertion. A store
// that passes is safe to hand to bbolt; one that does not is damaged.
//
// How far a walk reads is its walkDepth.
type pageWalk struct {
	f        io.ReaderAt
	meta     boltMeta
	depth    walkDepth
	visit    func(key, value []byte)
	seen     map[uint64]bool
	problems []string
	// spare is a page buffer free for the next read (see pageBuffer).
	spare []byte
	// lost is what a damaged page cost a full walk: for each damaged
	// page, the first key under it where its parent names one.
	lost []lostPage
	// free is the pages the free list names, when it could be read.
	free map[uint64]bool
}

// walkDepth is how much of a file a pageWalk reads.
type walkDepth int

const (
	// walkMeta reads the meta pages only and checks that the file holds
	// every page they count.
	walkMeta walkDepth = iota
	// walkBranches also reads the branch pages and the headers of the
	// leaf pages, a small part of the file: enough to rule out loops and
	// pages outside the file, for every read-only open.
	walkBranches
	// walkAll reads every page of the trees, as a writer's open, Check
	// and Salvage do, and passes each readable record of the kv bucket
	// to visit.
	walkAll
)

// lostPage is a page (and the pages under it) whose records a walk could
// not read.
type lostPage struct {
	ID       uint64
	FirstKey string // the parent's key for it; empty when unknown
	Reason   string
}

// walkFile runs a pageWalk over the file at path (see pageWalk).
func walkFile(path string, depth walkDepth, visit func(key, value []byte)) (*pageWalk, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	w := &pageWalk{f: f, depth: depth, visit: visit, seen: map[uint64]bool{}}
	w.run(info.Size())
	return w, nil
}

// problemsOrNil returns the problems of w, nil for a nil w.
func (w *pageWalk) problemsOrNil() []string {
	if w == nil {
		return nil
	}
	return w.problems
}

// run walks the file of size bytes, collecting problems.
func (w *pageWalk) run(size int64) {
	meta, err := readMeta(w.f)
	if err != nil {
		w.problem("%v", err)
		return
	}
	w.meta = meta
	if meta.hwm > uint64(size)/uint64(meta.pageSize) || meta.hwm < firstDataPageID {
		// Walk on all the same: the pages past the end fail to read, and
		// a salvage keeps what comes before them.
		w.problem("truncated: %d bytes, its meta page counts %d pages of %d bytes", size, meta.hwm, meta.pageSize)
	}
	if w.depth == walkMeta {
		return
	}
	w.tree(meta.root, span{inRoot: true})
	w.freelist()
}

// readMeta returns the valid meta page with the highest transaction id, as
// bbolt picks it.
func readMeta(f io.ReaderAt) (boltMeta, error) {
	var best boltMeta
	found := false
	pageSize := uint32(os.Getpagesize())
	for i := range 2 {
		buf := make([]byte, pageHeaderSize+metaSize)
		if _, err := f.ReadAt(buf, int64(i)*int64(pageSize)); err != nil {
			continue
		}
		m, ok := parseMeta(buf[pageHeaderSize:])
		if !ok {
			continue
		}
		if i == 0 {
			pageSize = m.pageSize // meta 1 sits one page in
		}
		if !found || m.txid > best.txid {
			best, found = m, true
		}
	}
	if !found {
		return boltMeta{}, fmt.Errorf("neither meta page (0 or 1) is valid")
	}
	return best, nil
}

// parseMeta decodes and validates one meta page.
func parseMeta(b []byte) (boltMeta, bool) {
	le := binary.LittleEndian
	h := fnv.New64a()
	h.Write(b[:56])
	if le.Uint32(b[0:]) != boltMagic || le.Uint32(b[4:]) != boltVersion || h.Sum64() != le.Uint64(b[56:]) {
		return boltMeta{}, false
	}
	m := boltMeta{pageSize: le.Uint32(b[8:]), root: le.Uint64(b[16:]), freelist: le.Uint64(b[32:]),
		hwm: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}
	return m, m.pageSize >= 1024 && m.pageSize <= 1<<20
}

// problem records one problem.
func (w *pageWalk) problem(format string, args ...any) {
	if len(w.problems) < MaxPageProblems {
		w.problems = append(w.problems, fmt.Sprintf(format, args...))
	}
}

// page reads page id, checking that it is inside the file, named once and
// of the kind wanted. It returns the whole page for a branch page or when
// body is true, else its header only; nil after recording a problem.
func (w *pageWalk) page(id uint64, want uint16, firstKey string, body bool) []byte {
	bad := func(format string, args ...any) []byte {
		reason := fmt.Sprintf(format, args...)
		w.problem("page %d: %s", id, reason)
		w.lost = append(w.lost, lostPage{ID: id, FirstKey: firstKey, Reason: reason})
		return nil
	}
	switch {
	case id < firstDataPageID || id >= w.meta.hwm:
		return bad("out of bounds (the file has %d pages)", w.meta.hwm)
	case w.seen[id]:
		return bad("referenced twice: the tree loops or two trees share it")
	}
	ps := int64(w.meta.pageSize)
	// A page whose body is wanted is read whole in the same read as its
	// header: one read a page, not two, for a writer's walk of every
	// page. Its header is checked before a failed read of the rest is.
	head := make([]byte, pageHeaderSize)
	if body {
		head = w.pageBuffer(ps)
	}
	n, readErr := w.f.ReadAt(head, int64(id)*ps)
	if n < pageHeaderSize {
		return bad("cannot be read: %v", readErr)
	}
	le := binary.LittleEndian
	overflow := uint64(le.Uint32(head[12:]))
	flags := le.Uint16(head[8:])
	switch {
	case le.Uint64(head) != id:
		return bad("says it is page %d", le.Uint64(head))
	case flags != want && (want != branchPageFlag|leafPageFlag || (flags != branchPageFlag && flags != leafPageFlag)):
		return bad("unexpected type (flags %#x) where a %s page belongs", flags, kindName(want))
	case id+overflow >= w.meta.hwm:
		return bad("overflows past the end of the file (%d more pages)", overflow)
	case overflow > w.maxOverflow(want):
		return bad("claims %d more pages, more than any page of its kind needs", overflow)
	}
	for i := id; i <= id+overflow; i++ {
		w.seen[i] = true
	}
	if flags != branchPageFlag && !body {
		return head
	}
	if body && readErr != nil {
		return bad("cannot be read: %v", readErr)
	}
	if body && overflow == 0 {
		return head
	}
	buf := make([]byte, int64(overflow+1)*ps)
	if _, err := w.f.ReadAt(buf, int64(id)*ps); err != nil {
		return bad("cannot be read: %v", err)
	}
	return buf
}

// maxOverflow bounds the pages that follow a page of kind want, so that a
// damaged count never makes the walk read (and hold) much of the file at
// once: a tree page grows past one page only for large records (bbolt
// never splits a page of four or fewer, each at most MaxValueSize with
// bbolt's longest key), the free list by 8 bytes for each page of the
// file.
func (w *pageWalk) maxOverflow(want uint16) uint64 {
	ps := uint64(w.meta.pageSize)
	if want == freelistFlag {
		return (w.meta.hwm*8+16)/ps + 1
	}
	return (pageHeaderSize+4*(elementSize+bbolt.MaxKeySize+revisionSize+MaxValueSize))/ps + 1
}

// kindName names the page kinds of want.
func kindName(want uint16) string {
	switch want {
	case branchPageFlag:
		return "branch"
	case leafPageFlag:
		return "leaf"
	case freelistFlag:
		return "free-list"
	}
	return "branch or leaf"
}

// span is where a page sits in its tree: how deep, whether in the root
// bucket (whose one entry is the kv bucket), and the range its keys must
// lie in, from lo (inclusive) to hi (exclusive; nil: no bound), as its
// parent's keys set it.
type span struct {
	depth  int
	inRoot bool
	lo, hi []byte
}

// tree walks the B+tree at page id.
func (w *pageWalk) tree(id uint64, s span) {
	if s.depth > maxTreeDepth {
		w.problem("page %d: more than %d levels deep: the tree loops", id, maxTreeDepth)
		return
	}
	p := w.page(id, branchPageFlag|leafPageFlag, string(s.lo), w.depth == walkAll || s.inRoot)
	if p == nil {
		return
	}
	w.elements(id, p, s)
	if binary.LittleEndian.Uint16(p[8:]) == leafPageFlag && w.visit == nil {
		w.spare = p // done with: nothing kept a part of it
	}
}

// pageBuffer returns a buffer of ps bytes: the last leaf page's, done
// with, or a new one. A walk reads every page of the file, so reusing
// one spares the collector as many buffers as the file has pages.
func (w *pageWalk) pageBuffer(ps int64) []byte {
	if b := w.spare; int64(len(b)) == ps {
		w.spare = nil
		return b
	}
	return make([]byte, ps)
}

// element is one decoded element of a page: a branch element's key and
// child page, or a leaf element's key, value and bucket flag.
type element struct {
	key, value []byte
	child      uint64
	bucket     bool
}

// elements walks the elements of page p (page id, or for an inline
// bucket the page of the element that holds it).
func (w *pageWalk) elements(id uint64, p []byte, s span) {
	flags := binary.LittleEndian.Uint16(p[8:])
	if flags == leafPageFlag && w.depth != walkAll && !s.inRoot {
		return
	}
	elems := w.decode(id, p)
	if flags == branchPageFlag && len(elems) == 0 {
		w.problem("page %d: a branch page without elements", id)
		return
	}
	for i, e := range elems {
		switch {
		case i == 0 && bytes.Compare(e.key, s.lo) < 0:
			w.problem("page %d: key %q sorts before %q, the key its parent has for it", id, e.key, s.lo)
		case i > 0 && bytes.Compare(e.key, elems[i-1].key) <= 0:
			w.problem("page %d: key %q does not sort after %q, the key before it", id, e.key, elems[i-1].key)
		case s.hi != nil && bytes.Compare(e.key, s.hi) >= 0:
			w.problem("page %d: key %q does not sort before %q, where its parent's next page starts", id, e.key, s.hi)
		}
		if flags == leafPageFlag {
			w.leaf(id, e, s)
			continue
		}
		next := span{depth: s.depth + 1, inRoot: s.inRoot, lo: e.key, hi: s.hi}
		if i+1 < len(elems) {
			next.hi = elems[i+1].key
		}
		w.tree(e.child, next)
	}
}

// decode returns the elements of page p whose keys (and values) lie
// inside it, recording a problem for each that does not.
func (w *pageWalk) decode(id uint64, p []byte) []element {
	count := int(binary.LittleEndian.Uint16(p[10:]))
	if pageHeaderSize+count*elementSize > len(p) {
		w.problem("page %d: %d elements do not fit in %d bytes", id, count, len(p))
		return nil
	}
	var out []element
	for i := range count {
		e, ok := elementAt(p, i)
		if !ok {
			w.problem("page %d: element %d points outside the page", id, i)
			if e.key != nil {
				w.lost = append(w.lost, lostPage{ID: id, FirstKey: string(e.key), Reason: "its value lies outside the page"})
			}
			continue
		}
		out = append(out, e)
	}
	return out
}

// elementAt decodes element i of page p, which must fit in p's element
// array. ok is false when the element points outside p; a leaf element's
// key is still set then when it lies inside.
func elementAt(p []byte, i int) (e element, ok bool) {
	le := binary.LittleEndian
	at := pageHeaderSize + i*elementSize
	raw := p[at : at+elementSize]
	if le.Uint16(p[8:]) == branchPageFlag {
		key, ok := slice(p, uint64(at)+uint64(le.Uint32(raw[0:])), uint64(le.Uint32(raw[4:])))
		return element{key: key, child: le.Uint64(raw[8:])}, ok
	}
	pos, ksize, vsize := uint64(at)+uint64(le.Uint32(raw[4:])), uint64(le.Uint32(raw[8:])), uint64(le.Uint32(raw[12:]))
	key, okKey := slice(p, pos, ksize)
	value, okValue := slice(p, pos+ksize, vsize)
	return element{key: key, value: value, bucket: le.Uint32(raw[0:])&bucketLeafFlag != 0}, okKey && okValue
}

// leaf checks one leaf element of page id. The root bucket holds the kv
// bucket and nothing else; the kv bucket holds records and no buckets.
func (w *pageWalk) leaf(id uint64, e element, s span) {
	switch {
	case s.inRoot && (!e.bucket || string(e.key) != bucketName):
		w.problem("page %d: the root bucket holds %q, not only the %q bucket", id, e.key, bucketName)
	case s.inRoot:
		w.bucket(id, e.value, s.depth)
	case e.bucket:
		w.problem("page %d: record %q is marked as a nested bucket, which flowgate never makes", id, e.key)
		w.lost = append(w.lost, lostPage{ID: id, FirstKey: string(e.key), Reason: "marked as a nested bucket"})
	case w.visit != nil:
		w.visit(e.key, e.value)
	}
}

// bucket walks the kv bucket whose header is value, found on page id.
func (w *pageWalk) bucket(id uint64, value []byte, depth int) {
	if len(value) < inBucketSize {
		w.problem("page %d: the %q bucket's header has %d bytes", id, bucketName, len(value))
		return
	}
	if root := binary.LittleEndian.Uint64(value); root != 0 {
		w.tree(root, span{})
		return
	}
	inline := value[inBucketSize:]
	if len(inline) < pageHeaderSize || binary.LittleEndian.Uint16(inline[8:]) != leafPageFlag {
		w.problem("page %d: the %q bucket is stored inline, but not as a leaf page", id, bucketName)
		return
	}
	w.elements(id, inline, span{depth: depth + 1})
}

// freelist checks the free list: free pages lie inside the file, once
// each, and are not in a tree.
func (w *pageWalk) freelist() {
	if w.meta.freelist == noFreelist {
		return
	}
	lost := len(w.lost)
	p := w.page(w.meta.freelist, freelistFlag, "", true)
	if p == nil {
		w.lost = w.lost[:lost] // a damaged free list holds no records
		return
	}
	le := binary.LittleEndian
	start, count := uint64(pageHeaderSize), uint64(le.Uint16(p[10:]))
	if count == 0xFFFF {
		count, start = le.Uint64(p[pageHeaderSize:]), pageHeaderSize+8
	}
	ids, ok := slice(p, start, count*8)
	if !ok || count > uint64(len(p)) {
		w.problem("page %d: a free list of %d pages does not fit in it", w.meta.freelist, count)
		return
	}
	free := map[uint64]bool{}
	w.free = free
	for i := uint64(0); i < count; i++ {
		id := le.Uint64(ids[i*8:])
		switch {
		case id < firstDataPageID || id >= w.meta.hwm:
			w.problem("page %d: the free list names page %d, outside the file", w.meta.freelist, id)
		case free[id]:
			w.problem("page %d: the free list names page %d twice", w.meta.freelist, id)
		case w.seen[id]:
			w.problem("page %d: the free list names page %d, which is in use", w.meta.freelist, id)
		}
		free[id] = true
	}
}

// slice returns p[off:off+n], or false when that is not inside p.
func slice(p []byte, off, n uint64) ([]byte, bool) {
	if off > uint64(len(p)) || n > uint64(len(p))-off {
		return nil, false
	}
	return p[off : off+n], true
}
