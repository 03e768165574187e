package engine

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"time"
)

// idSource makes UUIDv7 ids: a millisecond timestamp, then a 12-bit counter
// that keeps ids from one process strictly increasing within a millisecond,
// then random bits. Ids therefore sort by creation time, which lets the
// store list records newest first by walking keys backwards.
type idSource struct {
	mu     sync.Mutex
	rand   io.Reader
	lastMS int64
	seq    uint16
}

func newIDSource(r io.Reader) *idSource { return &idSource{rand: r} }

func (s *idSource) next(now time.Time) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(s.rand, b[6:]); err != nil {
		return "", fmt.Errorf("make id: entropy source failed: %w", err)
	}
	s.mu.Lock()
	ms := now.UnixMilli()
	if ms <= s.lastMS {
		ms = s.lastMS
		s.seq++
		if s.seq >= 0x1000 {
			ms++
			s.seq = 0
		}
	} else {
		s.seq = binary.BigEndian.Uint16(b[6:8]) & 0x03ff // leave room to count up
	}
	s.lastMS = ms
	seq := s.seq
	s.mu.Unlock()

	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(ms))
	copy(b[0:6], t[2:8])
	b[6] = 0x70 | byte(seq>>8)&0x0f
	b[7] = byte(seq)
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}
