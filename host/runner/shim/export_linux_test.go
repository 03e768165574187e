package shim

// ParseStat exposes parseStat to the external tests.
func ParseStat(b []byte) (state byte, ppid, pgrp int, startTime uint64, err error) {
	s, err := parseStat(b)
	return s.state, s.ppid, s.pgrp, s.startTime, err
}
