package maintenance

import (
	"os"
	"path/filepath"
	"time"

	"github.com/flowgate/flowgate/host/store"
)

// compaction measures the file's free space and, applying, asks for a
// compaction when it is due.
func (p *pass) compaction() {
	if p.cfg.Space == nil {
		return
	}
	sp, err := p.cfg.Space()
	if err != nil {
		p.fail("measure the store file", err)
		return
	}
	c := &Compaction{Space: sp, Due: sp.FreeShare() > p.cfg.CompactShare && sp.FreeBytes >= p.cfg.CompactMinBytes}
	p.sum.Compaction = c
	if !c.Due || !p.cfg.Apply || p.cfg.Home == "" {
		return
	}
	marker := filepath.Join(p.cfg.Home, CompactMarker)
	if err := os.WriteFile(marker, []byte(p.now.UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		p.fail("ask for a compaction", err)
		return
	}
	c.Requested = true
}

// CompactIfRequested compacts the store file at path when an applying
// pass asked for it (the marker CompactMarker in home), then removes the
// marker. Call it where nothing holds the store: before the gateway opens
// it, or after tasks maintenance closed it. It reports whether it
// compacted, with the sizes before and after.
func CompactIfRequested(home, path string, opts store.Options) (done bool, before, after int64, err error) {
	marker := filepath.Join(home, CompactMarker)
	if _, err := os.Stat(marker); err != nil {
		return false, 0, 0, nil
	}
	if before, after, err = store.Compact(path, opts); err != nil {
		return false, before, after, err
	}
	return true, before, after, os.Remove(marker)
}
