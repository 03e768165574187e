package migrate

import (
	"bytes"
	"context"
	"fmt"

	"github.com/flowgate/flowgate/host/store"
)

// verifyPage is how many keys Verify compares at a time.
const verifyPage = 500

// Verify compares the target a with the source b key by key, in pages,
// and returns an error naming the first key whose presence, value or
// revision differs, or nil when they hold the same keys with the same
// values and revisions. Its reads are bounded by ctx.
func Verify(ctx context.Context, a, b store.Store) error {
	after := ""
	for {
		pa, err := page(ctx, a, after)
		if err != nil {
			return fmt.Errorf("migrate: verify: read the target: %w", err)
		}
		pb, err := page(ctx, b, after)
		if err != nil {
			return fmt.Errorf("migrate: verify: read the source: %w", err)
		}
		for i := range min(len(pa), len(pb)) {
			x, y := pa[i], pb[i]
			switch {
			case x.Key != y.Key:
				return fmt.Errorf("migrate: verify: the target has key %q where the source has %q; the copy is not faithful: empty the target and start again", x.Key, y.Key)
			case x.Revision != y.Revision:
				return fmt.Errorf("migrate: verify: key %q is at revision %d in the target and %d in the source; empty the target and start again", x.Key, x.Revision, y.Revision)
			case !bytes.Equal(x.Value, y.Value):
				return fmt.Errorf("migrate: verify: key %q has another value in the target than in the source; empty the target and start again", x.Key)
			}
		}
		if len(pa) != len(pb) {
			return fmt.Errorf("migrate: verify: after key %q the target holds %d keys in the next page and the source %d; empty the target and start again", after, len(pa), len(pb))
		}
		if len(pa) < verifyPage {
			return nil
		}
		after = pa[len(pa)-1].Key
	}
}

// page returns up to verifyPage items of s after the key after.
func page(ctx context.Context, s store.Store, after string) ([]store.Item, error) {
	var items []store.Item
	err := s.View(ctx, func(tx store.ReadTx) error {
		return tx.Scan("", store.ScanOptions{After: after, Limit: verifyPage}, func(it store.Item) bool {
			items = append(items, it)
			return true
		})
	})
	return items, err
}
