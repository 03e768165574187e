package shim

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// RecordFile is the attempt's record: what the shim and the gateway tell
// each other after the launch, in one file written in place. The gateway
// makes it (Prepare) before it starts the shim; the shim claims the
// attempt by writing its identity there; see Record.
const RecordFile = "record"

// Record is what the attempt's record file holds, each field written
// once, in this order.
type Record struct {
	// Shim is the shim's identity: written when it claims the attempt,
	// before the child starts.
	Shim *ProcInfo `json:"shim,omitempty"`
	// Child is the child's identity, with its process group, written
	// right after it started.
	Child *ProcInfo `json:"child,omitempty"`
	// Status is how the attempt ended, written once the child and every
	// process left in its group are gone; or, without Shim, the
	// gateway's withdrawal of an attempt no shim claimed (see Withdraw).
	Status *Status `json:"status,omitempty"`
}

// withdrawn reports whether r is a withdrawal: a status and no shim.
func (r Record) withdrawn() bool {
	return r.Shim == nil && r.Status != nil && r.Status.Reason == ReasonWithdrawn
}

// The record file is two slots of slotSize bytes, written alternately
// (bbolt's meta pages work the same way): a write overwrites the older
// slot in place and syncs it, so a write torn by a crash leaves the
// newer of the two intact. A slot is
//
//	magic [4]byte "FGR1"
//	seq   uint64  (little endian) one more than the slot written before
//	n     uint32  length of the JSON that follows
//	sum   uint32  CRC-32C of seq, n and the JSON
//	JSON  [n]byte the Record
//
// and the reader takes the valid slot with the higher seq.
const (
	slotSize   = 4096
	slotHeader = 20
	// maxError bounds Status.Error so a record always fits its slot.
	maxError = 2048
)

var slotMagic = [4]byte{'F', 'G', 'R', '1'}

// recordWriter writes one attempt's record file.
type recordWriter struct {
	f   *os.File
	seq uint64
	rec Record
}

// errClaimed is returned by claimRecord when the attempt is claimed by
// another shim or withdrawn by the gateway.
var errClaimed = errors.New("the attempt is claimed or withdrawn already")

// Prepare makes the record file of the new attempt directory dir, with
// room for both slots, so that the shim's writes to it cannot fail for
// want of space: a full disk shows here, in the gateway, while the task
// can still be queued again. It fails when the file exists.
func Prepare(dir string) error {
	path := filepath.Join(dir, RecordFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("prepare the attempt record: %w", err)
	}
	_, err = f.Write(make([]byte, 2*slotSize))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("prepare the attempt record %s: %w", path, err)
	}
	return nil
}

// openRecord opens dir's record file, making it if it is missing (a shim
// started by hand, a withdrawal of an attempt never prepared), and
// returns it locked, with what it holds and the seq of its newer slot.
func openRecord(dir string) (*recordWriter, error) {
	f, err := openTaskFile(filepath.Join(dir, RecordFile), os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the attempt record: %w", err)
	}
	w := &recordWriter{f: f}
	if w.rec, w.seq, err = readSlots(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("read the attempt record: %w", err)
	}
	return w, nil
}

// claimRecord claims the attempt of dir for the shim whose identity rec
// holds: unless the gateway withdrew it or another shim claimed it
// (errClaimed), it writes rec. When synced, it makes rec and the
// directory entry durable, so that after a crash of the machine an
// attempt whose child may have run is never taken for one that did not;
// an attempt whose start recorded the boot it runs in needs no sync (see
// Spec.Boot).
func claimRecord(dir string, rec Record, synced bool) (*recordWriter, error) {
	w, err := openRecord(dir)
	if err != nil {
		return nil, fmt.Errorf("claim the attempt: %w", err)
	}
	if w.rec.Shim != nil || w.rec.Status != nil {
		w.close()
		return nil, errClaimed
	}
	err = w.write(rec, synced)
	if err == nil && synced && !entrySyncedWithFile(w.f) {
		err = syncDir(dir)
	}
	if err == nil {
		err = unlockFile(w.f)
	}
	if err != nil {
		w.close()
		return nil, fmt.Errorf("claim the attempt: %w", err)
	}
	return w, nil
}

// write stores rec in the older slot and, when durable, syncs its data.
// Only what must survive a crash of the machine needs the sync: the
// claim of an attempt a later boot may read (so an attempt whose child
// may have run is never taken for one that did not) and the status. A
// write left unsynced still survives the crash of any process, the
// gateway's or the shim's.
func (w *recordWriter) write(rec Record, durable bool) error {
	if rec.Status != nil && len(rec.Status.Error) > maxError {
		st := *rec.Status
		st.Error = st.Error[:maxError] + "…"
		rec.Status = &st
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode the attempt record: %w", err)
	}
	if len(body) > slotSize-slotHeader {
		return fmt.Errorf("the attempt record is %d bytes, over the %d a slot holds", len(body), slotSize-slotHeader)
	}
	seq := w.seq + 1
	slot := make([]byte, slotHeader+len(body))
	copy(slot, slotMagic[:])
	binary.LittleEndian.PutUint64(slot[4:], seq)
	binary.LittleEndian.PutUint32(slot[12:], uint32(len(body)))
	copy(slot[slotHeader:], body)
	binary.LittleEndian.PutUint32(slot[16:], slotSum(slot))
	if _, err := w.f.WriteAt(slot, int64(seq%2)*slotSize); err != nil {
		return fmt.Errorf("write the attempt record: %w", err)
	}
	if durable {
		if err := syncRecord(w.f); err != nil {
			return fmt.Errorf("write the attempt record: sync: %w", err)
		}
	}
	w.seq, w.rec = seq, rec
	return nil
}

func (w *recordWriter) close() error { return w.f.Close() }

// seenSync, when set (by tests), is told of each sync of a record file.
var seenSync func(path string)

// syncRecord makes the writes to f, a record file, durable.
func syncRecord(f *os.File) error {
	if seenSync != nil {
		seenSync(f.Name())
	}
	return datasync(f)
}

// syncClose makes the record's writes durable and closes it.
func (w *recordWriter) syncClose() error {
	err := syncRecord(w.f)
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// slotSum is the checksum of a slot: seq, n and the JSON.
func slotSum(slot []byte) uint32 {
	return crc32c(crc32c(0, slot[4:16]), slot[slotHeader:])
}

// slotBody returns the seq and the JSON of a slot, or ok false when the
// slot is empty, torn or damaged.
func slotBody(b []byte) (seq uint64, body []byte, ok bool) {
	if len(b) < slotHeader || [4]byte(b[:4]) != slotMagic {
		return 0, nil, false
	}
	seq = binary.LittleEndian.Uint64(b[4:])
	n := int(binary.LittleEndian.Uint32(b[12:]))
	if n > len(b)-slotHeader {
		return 0, nil, false
	}
	b = b[:slotHeader+n]
	if binary.LittleEndian.Uint32(b[16:]) != slotSum(b) {
		return 0, nil, false
	}
	return seq, b[slotHeader:], true
}

// readRecordFile reads dir's record file. A missing file gives an error
// matching fs.ErrNotExist; one that is not a regular file (the task
// replaced it) is refused (see OpenTaskFile).
func readRecordFile(dir string) (Record, error) {
	f, err := OpenTaskFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return Record{}, err
	}
	defer f.Close()
	rec, _, err := readSlots(f)
	return rec, err
}

// readSlots returns the record in f's valid slot with the higher seq, and
// that seq; an empty Record and 0 when neither slot is valid (a record
// prepared and not written yet).
func readSlots(f *os.File) (rec Record, seq uint64, err error) {
	b := make([]byte, 2*slotSize)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Record{}, 0, err
	}
	b = b[:n]
	// The newer valid slot holds the record; the older one is decoded
	// only if the newer one, checksum and all, is not JSON.
	var slots [2]struct {
		seq  uint64
		body []byte
	}
	for i, off := range []int{0, slotSize} {
		if off < len(b) {
			slots[i].seq, slots[i].body, _ = slotBody(b[off:min(off+slotSize, len(b))])
		}
	}
	if slots[1].seq > slots[0].seq {
		slots[0], slots[1] = slots[1], slots[0]
	}
	for _, sl := range slots {
		var r Record
		if sl.body != nil && json.Unmarshal(sl.body, &r) == nil {
			return r, sl.seq, nil
		}
	}
	return Record{}, 0, nil
}

// ReadRecord returns what the attempt directory dir says of the attempt:
// its record file or, for an attempt of a shim from before the record
// (which wrote shim.json, child.json and status.json), those files. A
// field not written yet is nil. It fails only when a file that exists
// cannot be read.
func ReadRecord(dir string) (Record, error) {
	rec, err := readRecordFile(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		return rec, err
	}
	var legacy Record
	if legacy.Shim, err = readLegacy[ProcInfo](dir, InfoFile); err != nil {
		return Record{}, err
	}
	if legacy.Child, err = readLegacy[ProcInfo](dir, ChildFile); err != nil {
		return Record{}, err
	}
	if legacy.Status, err = readLegacy[Status](dir, StatusFile); err != nil {
		return Record{}, err
	}
	return legacy, nil
}

// readLegacy reads the JSON file name of dir, written by a shim from
// before the record file; nil when there is none.
func readLegacy[T any](dir, name string) (*T, error) {
	var v T
	err := readJSON(filepath.Join(dir, name), &v)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &v, nil
}

// Withdraw takes back an attempt no shim has claimed, so that no shim
// will: it writes a withdrawn status to the record, which a shim that
// comes later finds and leaves alone (it runs nothing). It reports
// whether the attempt is withdrawn now; false means a shim claimed it
// first (the child may have started), and so does an error.
//
// A directory that does not exist was never launched: it counts as
// withdrawn. An attempt of a shim from before the record file is also
// withdrawn by renaming its spec.json away, which such a shim checks
// after it claimed the attempt.
func Withdraw(dir string) (bool, error) {
	legacySpec := filepath.Join(dir, SpecFile)
	if err := os.Rename(legacySpec, legacySpec+".withdrawn"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("withdraw %s: %w", dir, err)
	}
	if claimed, err := legacyClaimed(dir); err != nil || claimed {
		return false, err
	}
	w, err := openRecord(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("withdraw %s: %w", dir, err)
	}
	defer w.close()
	switch {
	case w.rec.withdrawn():
		return true, nil
	case w.rec.Shim != nil || w.rec.Status != nil:
		return false, nil
	}
	now := time.Now()
	err = w.write(Record{Status: &Status{
		ExitCode: ExitCannotRun, Reason: ReasonWithdrawn, StartedAt: now, EndedAt: now,
		Error: "the gateway withdrew the attempt before a shim claimed it",
	}}, true)
	if err != nil {
		return false, fmt.Errorf("withdraw %s: %w", dir, err)
	}
	return true, nil
}
