package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// files keeps the values of a flow's state that are too large to keep
// inline, each named by the SHA-256 of its bytes: in a file under
// dir/<flow id>/ (dir is the controller's data directory,
// sdk.DataDirEnv), or, on a store several gateways share, in the store
// through the Host (sdk.Host.KeepValue), where every gateway reads it
// and it moves with the flow. A value never changes once kept, so a
// state that names it can always be read back, by any pass; the gateway
// removes a flow's directory and its kept values when it prunes the flow.
type files struct {
	// dir is the data directory; "" means the controller has none, and
	// every value stays inline unless store is set.
	dir string
	// flow is the flow whose values new ones join; from is, in a
	// continuation, the source flow, whose values its reused results
	// name ("" for none).
	flow, from string
	// store, when set, keeps the values in the gateway's store instead
	// of dir.
	store *hostValues
}

// hostValues keeps a flow's values through the Host of one pass.
type hostValues struct {
	ctx  context.Context
	host sdk.Host
	// failed is the first error of the Host reading a value back, other
	// than a value it does not have or a digest it refuses: the store
	// may answer next time, so the pass ends on it instead of failing
	// the flow (see run.hostFailed).
	failed error
}

// ok reports whether there is a place to keep values in.
func (f files) ok() bool { return f.dir != "" || f.store != nil }

// local is f keeping its values in the data directory, whatever the
// store: for a value too large for the store (a workflow's output over
// sdk.MaxKeptValue, see state.keepProduced).
func (f files) local() files {
	f.store = nil
	return f
}

// path is where the value with digest sum of flow id is kept.
func (f files) path(id, sum string) string {
	return filepath.Join(f.dir, id, sum+".json")
}

// put keeps b and returns its digest. The file is written whole and
// synced before it is renamed into place, so a state written after put
// returns never names a partial file. In the gateway's store a value
// over sdk.MaxKeptValue, which it refuses, is errStateTooLarge: the flow
// fails saying so, instead of every pass failing on it.
func (f files) put(b []byte) (string, error) {
	if f.store != nil {
		if len(b) > sdk.MaxKeptValue {
			return "", fmt.Errorf("%w: a value of %d bytes of JSON is over the %d the gateway's shared store keeps as one; make the step print less (write large data to a file and print its path)", errStateTooLarge, len(b), sdk.MaxKeptValue)
		}
		sum, err := f.store.host.KeepValue(f.store.ctx, f.flow, b)
		if err != nil {
			return "", fmt.Errorf("keep a large value of flow %s in the gateway's store: %w", f.flow, err)
		}
		return sum, nil
	}
	if strings.ContainsAny(f.flow, `/\`) || f.flow == "." || f.flow == ".." {
		return "", fmt.Errorf("flow id %q cannot name a directory; its large values cannot be kept", f.flow)
	}
	s := sha256.Sum256(b)
	sum := hex.EncodeToString(s[:])
	dst := f.path(f.flow, sum)
	if _, err := os.Stat(dst); err == nil {
		return sum, nil
	}
	if err := writeAtomic(dst, b); err != nil {
		return "", fmt.Errorf("keep a large value of flow %s in %s: %w", f.flow, filepath.Dir(dst), err)
	}
	return sum, nil
}

// writeAtomic replaces file with b so that a reader sees either the old
// file or the whole new one: a temp file in the same directory (0600),
// synced, renamed over file, and the directory synced so the rename is
// durable too. It creates the directory (0700) if need be, and leaves no
// temp file behind on failure.
func writeAtomic(file string, b []byte) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// get reads back the value with digest sum, kept by the flow or its
// source flow (in the store, or in their directories), and checks it is
// still what was kept.
func (f files) get(sum string) ([]byte, error) {
	if !f.ok() {
		return nil, fmt.Errorf("the flow's state names a kept value (%s), but this controller has no data directory (%s is unset); run it under the gateway", sum, sdk.DataDirEnv)
	}
	var firstErr error
	for _, id := range []string{f.flow, f.from} {
		if id == "" {
			continue
		}
		b, err := f.read(id, sum)
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, sdk.ErrNotFound) {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read a kept value of flow %s: %w", id, err)
		}
		s := sha256.Sum256(b)
		if hex.EncodeToString(s[:]) != sum {
			return nil, fmt.Errorf("the kept value %s of flow %s changed since it was written; run the pipeline again", f.where(id, sum), id)
		}
		return b, nil
	}
	return nil, fmt.Errorf("a value of the flow's state was kept in %s, which is gone (%v); the flow's data was removed, so run the pipeline again", f.where(f.flow, sum), firstErr)
}

// read returns the value with digest sum that flow id keeps, unchecked.
func (f files) read(id, sum string) ([]byte, error) {
	if f.store != nil {
		b, err := f.store.host.KeptValue(f.store.ctx, id, sum)
		if err != nil && f.store.failed == nil && !errors.Is(err, sdk.ErrNotFound) && !errors.Is(err, sdk.ErrInvalid) {
			f.store.failed = err
		}
		return b, err
	}
	return os.ReadFile(f.path(id, sum))
}

// where names the place of the value with digest sum of flow id, for
// messages.
func (f files) where(id, sum string) string {
	if f.store != nil {
		return "the gateway's store (" + sum + ")"
	}
	return f.path(id, sum)
}
