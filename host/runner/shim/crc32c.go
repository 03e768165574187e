package shim

// crc32c returns crc updated with p, as hash/crc32's Update with the
// Castagnoli table does. The shim computes it by hand, a byte at a
// time: hash/crc32 sets up its SSE4.2 tables on first use of Castagnoli
// (about 0.15 ms, a twentieth of what a whole shim run costs), which a
// record of a few hundred bytes does not repay.
func crc32c(crc uint32, p []byte) uint32 {
	crc = ^crc
	for _, b := range p {
		crc = castagnoliTable[byte(crc)^b] ^ crc>>8
	}
	return ^crc
}

// castagnoliTable is the byte-wise table of the reflected Castagnoli
// polynomial, computed when the package initialises: 2,048 shifts, a few
// microseconds, and no allocation.
var castagnoliTable = func() (t [256]uint32) {
	const poly = 0x82f63b78
	for i := range t {
		c := uint32(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()
