package store

import (
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// salvageBatch is how many bytes of records Salvage writes per
// transaction.
const salvageBatch = 8 << 20

// salvageWriter puts the records Salvage finds into the new store's kv
// bucket, in transactions of about salvageBatch bytes.
type salvageWriter struct {
	db    *bbolt.DB
	batch [][2][]byte
	size  int
	err   error
	// put writes one record in the open bucket.
	put func(b *bbolt.Bucket, key, value []byte) error
}

// add queues one record, whose key and value must stay unchanged until
// the next flush, writing the queue when it is full.
func (s *salvageWriter) add(key, value []byte) {
	s.batch = append(s.batch, [2][]byte{key, value})
	if s.size += len(key) + len(value); s.size >= salvageBatch {
		_ = s.flush() // kept in s.err, returned by the last flush
	}
}

// flush writes the queued records in one transaction and returns the
// first error of any write so far.
func (s *salvageWriter) flush() error {
	if s.err != nil || len(s.batch) == 0 {
		return s.err
	}
	s.err = s.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucketName))
		if err != nil {
			return err
		}
		for _, kv := range s.batch {
			if err := s.put(b, kv[0], kv[1]); err != nil {
				return fmt.Errorf("put %q: %w", kv[0], err)
			}
		}
		return nil
	})
	s.batch, s.size = s.batch[:0], 0
	return s.err
}

// newestCopy is the put of the page scan's records: a freed page keeps
// an old version of the records it held, so one key may turn up on
// several pages. The copy the walk from the root found is the record as
// last committed and stays; among the scan's copies, the one with the
// highest revision (the store's per-key count of writes) wins. It counts
// what it keeps and drops in rep.
func newestCopy(rep *SalvageReport) func(b *bbolt.Bucket, key, value []byte) error {
	scanned := map[string]bool{}
	return func(b *bbolt.Bucket, key, value []byte) error {
		old := b.Get(key)
		switch {
		case old != nil && (!scanned[string(key)] || binary.BigEndian.Uint64(old) >= binary.BigEndian.Uint64(value)):
			rep.Duplicates++
			return nil
		case old != nil:
			rep.Duplicates++
		default:
			scanned[string(key)] = true
			rep.Copied[keyKind(string(key))]++
			rep.Scanned[keyKind(string(key))]++
		}
		return b.Put(key, value)
	}
}
