package flows

import (
	"bytes"
	"path/filepath"
	"sync"
)

// maxCached bounds the workflows a Cache keeps. A gateway runs a few
// distinct files at a time; past the bound a load evicts one entry.
const maxCached = 64

// Cache keeps the workflows its Load parsed, so that a file loaded again
// whose bytes, and those of every sub-workflow it loaded, are unchanged
// is not parsed again. The pipeline controller loads a flow's workflow on
// every event (each step's end); with a Cache an unchanged file costs a
// read and a compare instead of a parse.
//
// A hit is exactly what Load would return: each file is read again and
// compared byte for byte, so a file edited between two loads, however
// quickly or to the same size, is parsed again. Only the parse is saved.
//
// The zero value is ready to use. A Cache is safe for concurrent use. The
// workflows it returns are shared between callers, which must not change
// them.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*cached // by the path given to Load
}

// cached is one loaded workflow and the files its load read.
type cached struct {
	wf    *Workflow
	files []source
}

// source is one file a load read: the path it was read by, the path that
// resolved to, and its bytes.
type source struct {
	path, abs string
	data      []byte
}

// Load returns the workflow at path as Load(path) does, parsing it only
// when path was not loaded through c before or one of the files that load
// read has changed since. A failed load is not kept.
func (c *Cache) Load(path string) (*Workflow, error) {
	c.mu.Lock()
	hit := c.entries[path]
	c.mu.Unlock()
	if hit != nil && hit.current() {
		return hit.wf, nil
	}
	var read []source
	wf, err := load(path, nil, &read)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[string]*cached)
	}
	if _, ok := c.entries[path]; !ok && len(c.entries) >= maxCached {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	c.entries[path] = &cached{wf: wf, files: read}
	return wf, nil
}

// current reports whether every file e's load read still resolves to the
// same file and holds the same bytes.
func (e *cached) current() bool {
	for _, f := range e.files {
		abs, err := resolve(f.path)
		if err != nil || abs != f.abs {
			return false
		}
		data, err := readFile(abs, f.path)
		if err != nil || !bytes.Equal(data, f.data) {
			return false
		}
	}
	return true
}

// resolve makes path absolute and follows its symlinks, as a load names
// the file it reads; a path that does not resolve is kept absolute, for
// the read to report.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}
