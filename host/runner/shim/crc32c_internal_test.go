package shim

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hand-written CRC-32C is hash/crc32's Castagnoli checksum, so that
// records written before and after it read the same.
func TestCRC32CIsCastagnoli(t *testing.T) {
	t.Parallel()
	table := crc32.MakeTable(crc32.Castagnoli)
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		seed := rng.Uint32()
		require.Equal(t, crc32.Update(seed, table, p), crc32c(seed, p), "len %d", n)
	}
}
